//! Prompts: definition and handler.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tessera_protocol::{GetPromptResult, Prompt, PromptArgument};

use crate::handler::{CallInput, ErasedHandler, erase_reply, typed_context};
use crate::{PromptReply, RequestContext};

/// Prompt arguments by name.
pub type PromptArguments = IndexMap<String, String>;

/// A prompt: its definition as listed, and the handler that renders it.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Option<ErasedHandler<GetPromptResult, PromptArguments>>,
}

impl PromptDef {
    /// A prompt named `name`, with no handler yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            prompt: Prompt {
                name: name.into(),
                ..Prompt::default()
            },
            handler: None,
        }
    }

    /// Human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Declares an argument.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(PromptArgument {
                name: name.into(),
                title: None,
                description: Some(description.into()),
                required: Some(required),
            });
        self
    }

    /// The handler: called with the context and the (string) arguments.
    pub fn handler<S, F, Fut>(mut self, f: F) -> Self
    where
        S: Serialize + DeserializeOwned + Send + 'static,
        F: Fn(RequestContext<S>, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PromptReply<S>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.handler = Some(Arc::new(move |input: CallInput, args: PromptArguments| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let ctx = typed_context::<S>(input)?;
                erase_reply(f(ctx, args).await)
            })
        }));
        self
    }

    /// The definition as `prompts/list` shows it.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// The first required argument missing from `args`.
    pub(crate) fn missing_argument<'a>(&'a self, args: &PromptArguments) -> Option<&'a str> {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .find(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
    }
}
