//! The one boxed future type of the workspace.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: how handlers, elicitors and ledgers are stored without a runtime.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
