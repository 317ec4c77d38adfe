//! A request on its way to a method, after its envelope was read.

use tessera_protocol::{RequestId, RequestMeta};

use crate::RequestFacts;

/// A request as dispatch passes it to a method: who sent it, and how.
pub(crate) struct Incoming {
    pub(crate) id: RequestId,
    /// Boxed: the envelope is large and moves through several futures.
    pub(crate) meta: Box<RequestMeta>,
    pub(crate) facts: RequestFacts,
    /// A round that asks is kept unsealed ([`Json::Kept`](crate::result_json::Json::Kept))
    /// for the era edge, instead of sealed into a ticket for the client.
    pub(crate) keep_rounds: bool,
}
