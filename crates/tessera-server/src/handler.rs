//! The typed/untyped boundary shared by tool, prompt and resource handlers.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_protocol::JsonObject;

use crate::answer::Slot;
use crate::context::RequestScope;
use crate::error::RequestStateFailure;
use crate::{BoxFuture, InputRequired, Reply, RequestContext, ServerError};

/// What dispatch hands a handler: the request, the opened ticket and the answers.
pub(crate) struct CallInput {
    pub scope: Arc<RequestScope>,
    pub state: Option<Value>,
    pub answers: IndexMap<String, Slot>,
    pub earlier: Arc<IndexMap<String, JsonObject>>,
}

/// A handler's reply with its state as JSON, ready to seal.
pub(crate) type ErasedReply<R> = Reply<R, Value>;

/// An erased handler for results of type `R`, taking extra input `X`.
pub(crate) type ErasedHandler<R, X> = Arc<
    dyn Fn(CallInput, X) -> BoxFuture<'static, Result<ErasedReply<R>, ServerError>> + Send + Sync,
>;

/// Types the ticket state into the handler's `S`; a state of another shape is an invalid ticket.
pub(crate) fn typed_context<S: DeserializeOwned>(
    input: CallInput,
) -> Result<RequestContext<S>, ServerError> {
    let state =
        match input.state {
            None | Some(Value::Null) => None,
            Some(value) => Some(serde_json::from_value(value).map_err(|e| {
                ServerError::InvalidRequestState {
                    reason: RequestStateFailure::StateShape(e.to_string()),
                }
            })?),
        };
    Ok(RequestContext {
        scope: input.scope,
        state,
        answers: input.answers,
        earlier: input.earlier,
    })
}

/// Turns a typed reply into one whose state is JSON.
pub(crate) fn erase_reply<R, S: Serialize>(
    reply: Reply<R, S>,
) -> Result<ErasedReply<R>, ServerError> {
    Ok(match reply {
        Reply::Complete(r) => Reply::Complete(r),
        Reply::InputRequired(ir) => {
            let state = match ir.state {
                None => None,
                Some(s) => Some(serde_json::to_value(s).map_err(|e| ServerError::Internal {
                    message: format!("the handler's state cannot be serialised: {e}"),
                })?),
            };
            Reply::InputRequired(InputRequired {
                requests: ir.requests,
                state,
            })
        }
    })
}
