//! Tools: definition, typed arguments, and the handler dispatch calls.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_protocol::{CallToolResult, ElicitationSchema, JsonObject, Tool, ToolAnnotations};

use crate::app_state::NeededState;
use crate::form::{Form, schema_of};
use crate::handler::{ErasedHandler, erase, parse_input};
use crate::handler_error::Kind;
use crate::{Context, HandlerError, Interrupt, IntoToolResult, ServerError};

/// A tool: its definition as listed, and the handler that serves calls.
///
/// The handler is an async function of the [`Context`] and the arguments,
/// typed: the input schema is generated from the arguments' type, arguments
/// that do not fit give a tool error naming the field (the handler does not
/// run), and the return type decides the result ([`IntoToolResult`]).
/// `#[tessera::tool]` writes this for an `async fn`.
///
/// ```
/// use tessera_server::{Context, ToolDef};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// let tool = ToolDef::new("echo", |_ctx: Context, args: Echo| async move { args.text })
///     .description("Echoes its input");
/// assert_eq!(tool.definition().input_schema["type"], "object");
/// ```
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: ErasedHandler<CallToolResult, Value>,
    pub(crate) single_use: bool,
    pub(crate) refusal: Option<String>,
    /// An answer that does not fit ends the call as a refusal ([`refuse_invalid_answers`](Self::refuse_invalid_answers)).
    pub(crate) refuse_invalid: bool,
    pub(crate) upfront: IndexMap<String, Arc<ElicitationSchema>>,
    pub(crate) problems: Vec<String>,
    pub(crate) needs: Vec<NeededState>,
    /// Whether the handler may ask for input ([`asks`](Self::asks)).
    pub(crate) asks: bool,
    /// OAuth scopes a caller's token must grant (checked when the request carries verified auth).
    pub(crate) scopes: Vec<String>,
    /// Parameters mirrored into `Mcp-Param-*` headers (`x-mcp-header`), found at build.
    pub(crate) param_headers: Vec<tessera_protocol::ParamHeader>,
    /// The `inputSchema`, compiled at build; arguments are checked against it
    /// before the handler runs.
    pub(crate) input_check: Option<tessera_protocol::SchemaValidator>,
    /// The `outputSchema`, compiled at build; results are checked against it.
    pub(crate) output_check: Option<tessera_protocol::SchemaValidator>,
    /// Whether calls may run as tasks (the tasks extension).
    pub(crate) task_support: TaskSupport,
    /// What every call's ticket binding starts with (`tools/call` and the name), hashed once.
    pub(crate) binding: tessera_state::BindingPrefix,
}

/// Whether a tool's calls may run as tasks (the tasks extension, SEP-2663).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Calls always run in their request (the default).
    #[default]
    Forbidden,
    /// A client that declares the extension gets a task where the handler
    /// calls [`Context::begin_task`]; other clients wait for the result.
    Optional,
    /// Only clients that declare the extension may call it; others get
    /// -32021 naming the capability, before the handler runs.
    Required,
}

impl ToolDef {
    crate::definition::shared_setters!(tool, "tool");

    /// A tool named `name` (1 to 128 of `A-Z a-z 0-9 _ - .`) served by `handler`.
    pub fn new<A, F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let name: String = name.into();
        let label: Arc<str> = name.as_str().into();
        let handler = erase(
            handler,
            move |arguments: Value| {
                parse_input::<A>(arguments).map_err(|problem| {
                    HandlerError::msg(format!(
                        "Input validation error: Invalid arguments for tool {label}: {problem}"
                    ))
                })
            },
            R::into_tool_result,
        );
        let binding = tessera_state::BindingPrefix::new("tools/call", &name);
        Self {
            tool: Tool {
                name,
                title: None,
                description: None,
                input_schema: crate::json_schema::object_schema_of::<A>(),
                output_schema: R::output_schema(),
                annotations: None,
                icons: None,
                meta: None,
            },
            handler,
            single_use: false,
            refusal: None,
            refuse_invalid: false,
            upfront: IndexMap::new(),
            problems: Vec::new(),
            needs: Vec::new(),
            asks: false,
            scopes: Vec::new(),
            param_headers: Vec::new(),
            input_check: None,
            output_check: None,
            task_support: TaskSupport::Forbidden,
            binding,
        }
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Replaces the generated input schema (it must have `type: "object"`).
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Replaces the output schema (it must have `type: "object"`): every result
    /// that is not an error must then carry `structuredContent` satisfying it,
    /// or the call fails with an internal error naming the field (checked when
    /// the server builds and on every call).
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// Lets calls run as tasks the client polls (see [`Context::begin_task`]).
    ///
    /// ```
    /// use tessera_server::{Context, TaskSupport, ToolDef};
    ///
    /// let tool = ToolDef::new("report", |ctx: Context, _: ()| async move {
    ///     ctx.begin_task()?;
    ///     Ok::<_, tessera_server::HandlerError>("report ready")
    /// })
    /// .task_support(TaskSupport::Optional);
    /// # let _ = tool;
    /// ```
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Each ticket of this tool is redeemed at most once (through the server's ticket ledger).
    pub fn single_use(mut self) -> Self {
        self.single_use = true;
        self
    }

    /// Whether each ticket of this tool is redeemed at most once.
    pub fn is_single_use(&self) -> bool {
        self.single_use
    }

    /// The text result when the user declines or cancels a question and the
    /// handler does not catch it (default: a sentence naming the question and
    /// what happened). An answer that does not fit the question is not a
    /// refusal: it is asked for again, with the reason (unless
    /// [`refuse_invalid_answers`](Self::refuse_invalid_answers)).
    ///
    /// ```
    /// # use tessera_server::{Context, ToolDef};
    /// let tool = ToolDef::new("noop", |_: Context, _: ()| async { "done" })
    ///     .on_refusal("Counter increase cancelled.");
    /// # let _ = tool;
    /// ```
    pub fn on_refusal(mut self, text: impl Into<String>) -> Self {
        self.refusal = Some(text.into());
        self
    }

    /// An answer that does not fit its form (an amount that is not a number)
    /// ends the call as a refusal — the [`on_refusal`](Self::on_refusal)
    /// text — instead of being asked for again with the reason (the
    /// default). For a tool that must behave as one that gives up at the
    /// first bad answer, like the reference counter.
    ///
    /// ```
    /// # use tessera_server::{Context, ToolDef};
    /// let tool = ToolDef::new("noop", |_: Context, _: ()| async { "done" })
    ///     .on_refusal("Counter increase cancelled.")
    ///     .refuse_invalid_answers();
    /// # let _ = tool;
    /// ```
    pub fn refuse_invalid_answers(mut self) -> Self {
        self.refuse_invalid = true;
        self
    }

    /// Lets a client answer the form `T` up front: an answer under `T::KEY`
    /// that no ticket asked for (e.g. on a first call without `requestState`)
    /// is checked against `T`'s form and reaches the handler's
    /// [`ask`](Context::ask) like an answer to an asked form. Without this,
    /// answers to questions that were not asked are ignored.
    pub fn accepts_upfront<T: Form>(mut self) -> Self {
        match schema_of::<T>() {
            Ok(schema) => {
                self.upfront.insert(T::KEY.to_owned(), schema);
            }
            Err(e) => self.problems.push(e.to_string()),
        }
        self
    }

    /// The definition as `tools/list` shows it.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }

    /// The parameters its `inputSchema` mirrors into `Mcp-Param-*` headers
    /// (`x-mcp-header`), which an HTTP server checks against the arguments.
    pub fn param_headers(&self) -> &[tessera_protocol::ParamHeader] {
        &self.param_headers
    }

    /// The result of a call whose handler stopped on `error` (other than asking
    /// for input): a refusal's text, a tool error (`isError`), or the server's
    /// error when the tool itself is broken. Calls and tasks share it.
    pub(crate) fn outcome_of(&self, error: HandlerError) -> Result<CallToolResult, ServerError> {
        // The server's own error (a gateway passing an upstream's on) is the request's.
        let error = match error.0 {
            Kind::Server(server) => return Err(*server),
            other => HandlerError(other),
        };
        match &error.0 {
            Kind::Interrupt(i @ (Interrupt::UnusableForm { .. } | Interrupt::StartTask)) => {
                Err(ServerError::Internal {
                    message: format!("tool {}: {i}", self.tool.name),
                })
            }
            Kind::Interrupt(i) => {
                let mut refused = CallToolResult::text(
                    self.refusal
                        .clone()
                        .unwrap_or_else(|| i.default_refusal_text()),
                );
                // A tool that declares an outputSchema promises structured
                // results; a refusal has none, so it says it is not one.
                if self.output_check.is_some() {
                    refused.is_error = Some(true);
                }
                Ok(refused)
            }
            _ => Ok(crate::response::tool_failure(&error)),
        }
    }

    /// A finished result against the `outputSchema`: a result that is not an
    /// error must carry `structuredContent` that satisfies it (spec, server/tools:
    /// "Servers MUST provide structured results that conform to this schema").
    pub(crate) fn check_output(&self, result: &CallToolResult) -> Result<(), ServerError> {
        let Some(check) = &self.output_check else {
            return Ok(());
        };
        check
            .check_tool_result(
                result.is_error == Some(true),
                result.structured_content.as_ref(),
            )
            .map_err(|problem| ServerError::Internal {
                message: format!(
                    "tool {} returned a result that does not match its outputSchema: {problem}",
                    self.tool.name
                ),
            })
    }
}

/// Whether `name` follows the spec's tool-name rules (SHOULD: 1-128 of `A-Za-z0-9_-.`).
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("increase-counter"));
        assert!(is_valid_tool_name("a.b_c"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name(&"x".repeat(129)));
    }
}
