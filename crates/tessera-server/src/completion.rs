//! Argument completion (`completion/complete`): a handler per prompt argument
//! and per resource-template variable.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use tessera_protocol::Completion;

use crate::{BoxFuture, Context, HandlerError};

/// The argument being completed: its name, what the user typed so far, and the
/// arguments (or template variables) the user already filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartialArgument {
    /// The argument's (or variable's) name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments resolved before this one (`context.arguments`).
    pub filled: IndexMap<String, String>,
}

impl PartialArgument {
    /// The candidates that start with what the user typed, in their order.
    ///
    /// ```
    /// use tessera_server::PartialArgument;
    ///
    /// let typed = PartialArgument { value: "py".into(), ..Default::default() };
    /// assert_eq!(typed.matching(["python", "rust", "pytorch"]), ["python", "pytorch"]);
    /// ```
    pub fn matching<I, S>(&self, candidates: I) -> Vec<String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        candidates
            .into_iter()
            .map(Into::into)
            .filter(|c| c.starts_with(self.value.as_str()))
            .collect()
    }
}

/// What a completion handler may return: a [`Completion`], the values alone
/// (`Vec<String>`), or a `Result` of either.
pub trait IntoCompletion {
    /// The suggestions, or why there are none.
    fn into_completion(self) -> Result<Completion, HandlerError>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        Ok(Completion {
            total: Some(self.len() as u64),
            has_more: Some(false),
            values: self,
        })
    }
}

impl<T: IntoCompletion, E: Into<HandlerError>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, HandlerError> {
        self.map_err(Into::into).and_then(T::into_completion)
    }
}

/// Suggests values for one prompt argument or resource-template variable
/// (registered with `PromptDef::complete` or `ResourceTemplateDef::complete`).
#[derive(Clone)]
pub(crate) struct Completer(pub(crate) Arc<CompleteFn>);

/// A completion handler, erased.
type CompleteFn = dyn Fn(Context, PartialArgument) -> BoxFuture<'static, Result<Completion, HandlerError>>
    + Send
    + Sync;

impl Completer {
    /// A completer from an async function of the context and the partial argument.
    pub(crate) fn new<F, Fut, R>(handler: F) -> Self
    where
        F: Fn(Context, PartialArgument) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        Self(Arc::new(move |ctx, partial| {
            let running = handler(ctx, partial);
            Box::pin(async move { running.await.into_completion() })
        }))
    }
}

/// The completers of one prompt or template, by argument name.
pub(crate) type Completers = IndexMap<String, Completer>;
