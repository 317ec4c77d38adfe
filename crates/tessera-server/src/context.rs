//! Everything a handler may know about the request it serves.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tessera_protocol::{
    ClientCapabilities, Implementation, JsonObject, JsonRpcNotification, LOG_MESSAGE_NOTIFICATION,
    LoggingLevel, LoggingMessageParams, PROGRESS_NOTIFICATION, ProgressNotificationParams,
    RequestId, RequestMeta,
};

use crate::answer::{Answer, Slot};
use crate::{Era, RequestFacts};

/// Request-scoped data shared by the handler's context.
#[derive(Debug)]
pub(crate) struct RequestScope {
    pub id: RequestId,
    /// The tool or prompt name, or the resource URI; empty for other methods.
    pub target: String,
    /// Boxed: the envelope is large and the scope moves through several futures.
    pub meta: Box<RequestMeta>,
    pub facts: RequestFacts,
}

/// The context of one request: who asks, what they can do, the verified
/// ticket state `S` and the answers to the previous round.
#[derive(Debug)]
pub struct RequestContext<S = ()> {
    pub(crate) scope: Arc<RequestScope>,
    pub(crate) state: Option<S>,
    pub(crate) answers: IndexMap<String, Slot>,
    pub(crate) earlier: Arc<IndexMap<String, JsonObject>>,
}

static NO_CAPABILITIES: ClientCapabilities = ClientCapabilities {
    elicitation: None,
    sampling: None,
    roots: None,
    experimental: None,
    extensions: None,
};

impl<S> RequestContext<S> {
    /// The state sealed by the previous round, verified; `None` on the first round.
    pub fn state(&self) -> Option<&S> {
        self.state.as_ref()
    }

    /// Takes the state out of the context.
    pub fn take_state(&mut self) -> Option<S> {
        self.state.take()
    }

    /// The answer to the previous round's input request `key`.
    pub fn answer(&self, key: &str) -> Answer<'_> {
        self.answers
            .get(key)
            .map_or(Answer::Missing, Slot::as_answer)
    }

    /// The accepted content for `key` as `T`: from this round's answers, else
    /// from an earlier round of the same call (carried in the ticket). `None`
    /// when nothing was accepted or the content does not deserialize into `T`.
    pub fn accepted<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let content = self.accepted_content(key)?;
        match serde_json::from_value(Value::Object(content.clone())) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::debug!(key, error = %e, "accepted content does not fit the handler's type");
                None
            }
        }
    }

    /// The raw accepted content for `key` (this round first, then earlier rounds).
    pub fn accepted_content(&self, key: &str) -> Option<&JsonObject> {
        match self.answers.get(key) {
            Some(Slot::Accepted(c)) => Some(c),
            _ => self.earlier.get(key),
        }
    }

    /// The id of this JSON-RPC request.
    pub fn request_id(&self) -> &RequestId {
        &self.scope.id
    }

    /// The authenticated principal, if the transport established one.
    pub fn principal(&self) -> Option<&str> {
        self.scope.facts.principal.as_deref()
    }

    /// The client's self-description (unverified; for display and logs).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.scope.meta.client_info.as_ref()
    }

    /// The client's capabilities for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.scope
            .meta
            .client_capabilities
            .as_ref()
            .unwrap_or(&NO_CAPABILITIES)
    }

    /// The request's `_meta` envelope.
    pub fn meta(&self) -> &RequestMeta {
        &self.scope.meta
    }

    /// The era of the client.
    pub fn era(&self) -> Era {
        self.scope.facts.era.clone().unwrap_or(Era::Modern)
    }

    /// Reports progress, if the request asked for it (`_meta.progressToken`).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(sink)) = (
            &self.scope.meta.progress_token,
            &self.scope.facts.notifications,
        ) else {
            return;
        };
        let params = ProgressNotificationParams::new(
            token.clone(),
            progress,
            total,
            message.map(str::to_owned),
        );
        sink.send(json!(JsonRpcNotification::new(
            PROGRESS_NOTIFICATION,
            params
        )));
    }

    /// Sends a log message, if the request opted in (`_meta` logLevel) at or below `level`.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let (Some(wanted), Some(sink)) =
            (self.scope.meta.log_level, &self.scope.facts.notifications)
        else {
            return;
        };
        if level < wanted {
            return;
        }
        let params = LoggingMessageParams {
            level,
            logger: logger.map(str::to_owned),
            data,
            meta: None,
        };
        sink.send(json!(JsonRpcNotification::new(
            LOG_MESSAGE_NOTIFICATION,
            params
        )));
    }
}
