//! A request's outcome: its id and its serialised result or error.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tessera_protocol::{
    CallToolResult, GetPromptResult, InputRequiredResult, JsonRpcErrorResponse, ReadResourceResult,
    RequestId, ResultMeta,
};

use crate::ServerError;

/// The outcome of one request: its id and its result (serialised) or error.
#[derive(Debug)]
pub struct Handled {
    /// The request's id, echoed.
    pub id: RequestId,
    /// The result as JSON text, or why the request failed.
    pub result: Result<Box<RawValue>, ServerError>,
}

impl Handled {
    /// `complete`, `input_required` or `error`: for logs and metrics.
    pub fn outcome(&self) -> &'static str {
        match &self.result {
            Ok(raw) if is_input_required(raw) => "input_required",
            Ok(_) => "complete",
            Err(_) => "error",
        }
    }

    /// The result as a JSON value (parses it; for tests and tools, not the hot path).
    pub fn result_value(&self) -> Option<Value> {
        self.result
            .as_ref()
            .ok()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The JSON-RPC response as a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::from_slice(&self.to_bytes()).unwrap_or(Value::Null)
    }

    /// The JSON-RPC response serialised.
    pub fn to_bytes(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Ok<'a> {
            jsonrpc: &'static str,
            id: &'a RequestId,
            result: &'a RawValue,
        }
        match &self.result {
            Result::Ok(result) => {
                // Sized once: the result is most of the response.
                let mut out = Vec::with_capacity(result.get().len() + 64);
                serde_json::to_writer(
                    &mut out,
                    &Ok {
                        jsonrpc: "2.0",
                        id: &self.id,
                        result,
                    },
                )
                .map(|()| out)
            }
            Err(e) => serde_json::to_vec(&JsonRpcErrorResponse::new(
                Some(self.id.clone()),
                e.to_error_object(),
            )),
        }
        .unwrap_or_default()
    }
}

pub(crate) use crate::result_json::{Json, is_input_required};

/// Results that carry a `_meta` the server fills with its `serverInfo`.
pub(crate) trait ResultShape: Serialize {
    /// The result's `_meta`.
    fn meta_slot(&mut self) -> &mut Option<ResultMeta>;
}

macro_rules! result_shape {
    ($($t:ty),*) => {$(
        impl ResultShape for $t {
            fn meta_slot(&mut self) -> &mut Option<ResultMeta> {
                &mut self.meta
            }
        }
    )*};
}
result_shape!(
    CallToolResult,
    tessera_protocol::CreateTaskResult,
    tessera_protocol::GetTaskResult,
    GetPromptResult,
    ReadResourceResult,
    InputRequiredResult
);

pub(crate) fn serialisation_failed(e: serde_json::Error) -> ServerError {
    ServerError::Internal {
        message: format!("result cannot be serialised: {e}"),
    }
}
