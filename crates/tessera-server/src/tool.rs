//! Tools: definition, typed arguments, and the erased handler dispatch calls.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_protocol::{CallToolResult, JsonObject, Tool, ToolAnnotations};

use crate::handler::{CallInput, ErasedHandler, erase_reply, typed_context};
use crate::{ElicitForm, RequestContext, ToolReply};

/// A tool: its definition as listed, and the handler that serves calls.
///
/// ```
/// use tessera_server::{RequestContext, ToolDef, ToolReply};
/// use tessera_protocol::CallToolResult;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// let tool = ToolDef::new("echo")
///     .description("Echoes its input")
///     .handler(|_ctx: RequestContext, args: Echo| async move {
///         ToolReply::from(CallToolResult::text(args.text))
///     });
/// assert_eq!(tool.definition().input_schema["type"], "object");
/// ```
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Option<ErasedHandler<CallToolResult, Value>>,
    pub(crate) single_use: bool,
    pub(crate) form_problems: Vec<String>,
    pub(crate) expected: IndexMap<String, ElicitForm>,
}

impl ToolDef {
    /// A tool named `name` (1 to 128 of `A-Z a-z 0-9 _ - .`), with no handler yet.
    pub fn new(name: impl Into<String>) -> Self {
        let mut input_schema = JsonObject::new();
        input_schema.insert("type".into(), Value::String("object".into()));
        Self {
            tool: Tool {
                name: name.into(),
                title: None,
                description: None,
                input_schema,
                output_schema: None,
                annotations: None,
                icons: None,
                meta: None,
            },
            handler: None,
            single_use: false,
            form_problems: Vec::new(),
            expected: IndexMap::new(),
        }
    }

    /// Human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// What the tool does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
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

    /// Declares the schema of `structuredContent`.
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// Declares the schema of `structuredContent` from a Rust type.
    pub fn output_type<O: schemars::JsonSchema>(self) -> Self {
        self.output_schema(crate::schema::input_schema_of::<O>())
    }

    /// Extension metadata on the definition.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Each ticket of this tool is redeemed at most once (through the server's ticket ledger).
    pub fn single_use(mut self) -> Self {
        self.single_use = true;
        self
    }

    /// Declares the form the tool asks under `key` when that answer is missing,
    /// so a client may answer it up front: an answer under `key` that no
    /// ticket asked for (e.g. a first call without `requestState`) is checked
    /// against `form` and reaches the handler like an answer to an asked form.
    /// Without this, answers to questions that were not asked are ignored.
    ///
    /// ```
    /// use tessera_server::{ElicitForm, FormField, ToolDef};
    /// let tool = ToolDef::new("greet")
    ///     .expects_input("user_name", ElicitForm::new("What is your name?").required("name", FormField::string()));
    /// # let _ = tool;
    /// ```
    pub fn expects_input(mut self, key: impl Into<String>, form: ElicitForm) -> Self {
        self.expected.insert(key.into(), form);
        self
    }

    /// Declares that the tool asks for a form derived from `T`
    /// ([`ElicitForm::from_type`](crate::ElicitForm::from_type)); a type a form
    /// cannot show (nested objects, arrays of non-enums...) fails
    /// [`build`](crate::McpServerBuilder::build), naming the field.
    pub fn asks_for<T: schemars::JsonSchema>(mut self) -> Self {
        if let Err(e) = crate::schema::form_schema_of::<T>() {
            self.form_problems
                .push(format!("{} ({})", e, std::any::type_name::<T>()));
        }
        self
    }

    /// The handler: called with the request context and the arguments as `A`.
    ///
    /// The input schema is generated from `A`; arguments that do not
    /// deserialize into `A` give a tool error naming the field, and the
    /// handler does not run.
    pub fn handler<A, S, F, Fut>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        S: Serialize + DeserializeOwned + Send + 'static,
        F: Fn(RequestContext<S>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolReply<S>> + Send + 'static,
    {
        self.tool.input_schema = crate::schema::input_schema_of::<A>();
        let name: Arc<str> = self.tool.name.as_str().into();
        let f = Arc::new(f);
        self.handler = Some(Arc::new(move |input: CallInput, args: Value| {
            let f = Arc::clone(&f);
            let name = Arc::clone(&name);
            Box::pin(async move {
                let args: A = match parse_arguments(args) {
                    Ok(a) => a,
                    Err(problem) => {
                        return Ok(crate::Reply::Complete(CallToolResult::error(format!(
                            "Input validation error: Invalid arguments for tool {name}: {problem}"
                        ))));
                    }
                };
                let ctx = typed_context::<S>(input)?;
                erase_reply(f(ctx, args).await)
            })
        }));
        self
    }

    /// The definition as `tools/list` shows it.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

/// Deserializes arguments, describing the first problem with its path.
fn parse_arguments<A: DeserializeOwned>(args: Value) -> Result<A, String> {
    // Arguments that fit are read directly; only a failure pays for tracking the path.
    if let Ok(parsed) = A::deserialize(&args) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            inner.to_string()
        } else {
            format!("{path}: {inner}")
        }
    })
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

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Args {
        current: f64,
    }

    #[test]
    fn argument_errors_name_the_field() {
        let err = parse_arguments::<Args>(serde_json::json!({"current": "ten"})).unwrap_err();
        assert!(
            err.starts_with("current: invalid type: string \"ten\""),
            "{err}"
        );
        let err = parse_arguments::<Args>(serde_json::json!({})).unwrap_err();
        assert!(err.contains("missing field `current`"), "{err}");
    }

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("increase-counter"));
        assert!(is_valid_tool_name("a.b_c"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name(&"x".repeat(129)));
    }
}
