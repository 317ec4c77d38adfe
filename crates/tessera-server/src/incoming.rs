//! A request on its way to a method, after its envelope was read.

use tessera_protocol::{RequestId, RequestMeta};

use crate::RequestFacts;

/// A request as dispatch passes it to a method: who sent it, and how.
pub(crate) struct Incoming {
    pub(crate) id: RequestId,
    /// Boxed: the envelope is large and moves through several futures.
    pub(crate) meta: Box<RequestMeta>,
    pub(crate) facts: RequestFacts,
}
