//! Argument completion (`completion/complete`).

use std::future::Future;
use std::sync::Arc;

use tessera_protocol::{CompleteRequestParams, Completion};

use crate::BoxFuture;

/// Suggests values for a prompt or resource-template argument.
#[derive(Clone)]
pub struct CompletionHandler(
    pub(crate) Arc<dyn Fn(CompleteRequestParams) -> BoxFuture<'static, Completion> + Send + Sync>,
);

impl CompletionHandler {
    /// A handler from an async function of the request parameters.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(CompleteRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Completion> + Send + 'static,
    {
        Self(Arc::new(move |p| Box::pin(f(p))))
    }
}
