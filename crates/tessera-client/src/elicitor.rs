//! Who answers the server's input requests: the caller's [`Elicitor`].

use tessera_protocol::{
    BoxFuture, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitFormParams, ElicitResult, ElicitUrlParams, ElicitationCapability, JsonObject,
    ListRootsResult, SamplingCapability,
};

use crate::ClientError;

/// Which kinds of input an elicitor can really answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputKinds {
    /// Form-mode elicitation.
    pub form: bool,
    /// URL-mode elicitation.
    pub url: bool,
    /// Sampling (`sampling/createMessage`).
    pub sampling: bool,
    /// Roots (`roots/list`).
    pub roots: bool,
}

impl InputKinds {
    /// The client capabilities that declare exactly these kinds.
    pub fn capabilities(self) -> ClientCapabilities {
        let elicitation = (self.form || self.url).then(|| ElicitationCapability {
            form: self.form.then(JsonObject::new),
            url: self.url.then(JsonObject::new),
        });
        ClientCapabilities {
            elicitation,
            sampling: self.sampling.then(SamplingCapability::default),
            roots: self.roots.then(JsonObject::new),
            ..ClientCapabilities::default()
        }
    }
}

/// Answers input requests on the user's behalf, by asking them (or a script).
pub trait Elicitor: Send + Sync {
    /// What this elicitor can answer; capabilities are declared from this alone.
    fn kinds(&self) -> InputKinds;

    /// Shows a form; `server` names who asks.
    fn form<'a>(
        &'a self,
        server: &'a str,
        key: &'a str,
        params: &'a ElicitFormParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>>;

    /// Asks for consent to open a URL.
    fn url<'a>(
        &'a self,
        server: &'a str,
        key: &'a str,
        params: &'a ElicitUrlParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        let _ = (server, params);
        Box::pin(async move {
            Err(ClientError::Unanswerable {
                key: key.to_owned(),
                method: "elicitation/create (url)".into(),
            })
        })
    }

    /// Runs a sampling request.
    fn sample<'a>(
        &'a self,
        key: &'a str,
        params: &'a CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientError>> {
        let _ = params;
        Box::pin(async move {
            Err(ClientError::Unanswerable {
                key: key.to_owned(),
                method: "sampling/createMessage".into(),
            })
        })
    }

    /// Lists the client's roots.
    fn roots<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<ListRootsResult, ClientError>> {
        Box::pin(async move {
            Err(ClientError::Unanswerable {
                key: key.to_owned(),
                method: "roots/list".into(),
            })
        })
    }
}
