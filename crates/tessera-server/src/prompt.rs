//! Prompts: definition, typed arguments, and the handler that renders them.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_protocol::{GetPromptResult, Prompt, PromptArgument};

use crate::app_state::NeededState;
use crate::completion::{Completer, Completers};
use crate::handler::{ErasedHandler, erase, parse_input};
use crate::{Context, HandlerError, IntoCompletion, IntoPromptResult, PartialArgument};

/// Prompt arguments by name, for prompts that take whatever they are given.
pub type PromptArguments = IndexMap<String, String>;

/// A prompt: its definition as listed, and the handler that renders it.
///
/// The arguments are a type whose fields are strings (`Option<String>` for
/// optional ones): their names, doc comments and optionality are the prompt's
/// declared arguments. A prompt that takes none uses `()`.
///
/// ```
/// use tessera_server::{Context, PromptDef};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Review {
///     /// The code to review
///     code: String,
/// }
///
/// let prompt = PromptDef::new("review", |_ctx: Context, args: Review| async move {
///     format!("Please review:\n{}", args.code)
/// });
/// let declared = prompt.definition().arguments.as_ref().unwrap();
/// assert_eq!((declared[0].name.as_str(), declared[0].required), ("code", Some(true)));
/// ```
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: ErasedHandler<GetPromptResult, PromptArguments>,
    pub(crate) needs: Vec<NeededState>,
    /// Whether the handler may ask for input ([`asks`](Self::asks)).
    pub(crate) asks: bool,
    pub(crate) scopes: Vec<String>,
    pub(crate) completers: Completers,
}

impl PromptDef {
    crate::definition::shared_setters!(prompt, "prompt");

    /// A prompt named `name` rendered by `handler`.
    pub fn new<A, F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        let name: String = name.into();
        let label: Arc<str> = name.as_str().into();
        let handler = erase(
            handler,
            move |args: PromptArguments| {
                let object = args
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                parse_input::<A>(Value::Object(object)).map_err(|problem| {
                    HandlerError::invalid_params(format!(
                        "Invalid arguments for prompt {label}: {problem}"
                    ))
                })
            },
            R::into_prompt_result,
        );
        let arguments = declared_arguments(&crate::json_schema::object_schema_of::<A>());
        Self {
            prompt: Prompt {
                name,
                arguments: (!arguments.is_empty()).then_some(arguments),
                ..Prompt::default()
            },
            handler,
            needs: Vec::new(),
            asks: false,
            scopes: Vec::new(),
            completers: Completers::new(),
        }
    }

    /// Suggests values for the argument `argument` (`completion/complete`);
    /// the server fails to build when the prompt declares no such argument.
    ///
    /// ```
    /// use tessera_server::{Context, PartialArgument, PromptDef};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Review { language: String }
    ///
    /// let prompt = PromptDef::new("review", |_ctx: Context, args: Review| async move {
    ///     format!("Review this {} code.", args.language)
    /// })
    /// .complete("language", |_ctx: Context, typed: PartialArgument| async move {
    ///     typed.matching(["python", "rust", "typescript"])
    /// });
    /// # let _ = prompt;
    /// ```
    pub fn complete<F, Fut, R>(mut self, argument: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Context, PartialArgument) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.completers
            .insert(argument.into(), Completer::new(handler));
        self
    }

    /// Declares the prompt's arguments as they are listed, for a prompt whose
    /// arguments are known only at run time (its handler takes
    /// [`PromptArguments`](crate::PromptArguments)); required ones are
    /// checked before the handler runs.
    pub fn arguments(mut self, arguments: Vec<tessera_protocol::PromptArgument>) -> Self {
        self.prompt.arguments = (!arguments.is_empty()).then_some(arguments);
        self
    }

    /// The definition as `prompts/list` shows it.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// Whether the prompt declares the argument `name`.
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .any(|a| a.name == name)
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

/// The arguments an object schema declares: its properties, in order, with
/// their titles and descriptions, required when the schema requires them.
fn declared_arguments(schema: &serde_json::Map<String, Value>) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = |field: &Value, key: &str| field.get(key).and_then(Value::as_str).map(str::to_owned);
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, field)| PromptArgument {
            name: name.clone(),
            title: text(field, "title"),
            description: text(field, "description"),
            required: Some(required.contains(&name.as_str())),
        })
        .collect()
}
