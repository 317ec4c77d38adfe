//! What handlers may return, and how each becomes a result (axum's `IntoResponse`, for MCP).

use serde::Serialize;
use tessera_protocol::{
    BlobResourceContents, CallToolResult, GetPromptResult, JsonObject, PromptMessage,
    ReadResourceResult, ResourceContents,
};

use crate::HandlerError;
use crate::handler_error::Kind;

/// A tool handler's return type: `String` and `&'static str` (one text block),
/// [`CallToolResult`], [`Json<T>`] (structured content with its output
/// schema), `()` (no content), and `Result<T, E>` of any of these, where an
/// error becomes `isError: true` with its message.
///
/// ```
/// use tessera_server::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { total: f64 }
///
/// let result = Json(Sum { total: 3.0 }).into_tool_result().unwrap();
/// assert_eq!(result.structured_content.unwrap()["total"], 3.0);
/// assert!(<Json<Sum>>::output_schema().is_some());
/// ```
pub trait IntoToolResult {
    /// The result, or why the handler stopped short of it.
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError>;

    /// The schema of `structuredContent`, declared as the tool's `outputSchema`.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

/// Structured content: a `Serialize` value whose JSON object is the result's
/// `structuredContent`, with its JSON text as content and its schema as the
/// tool's `outputSchema`.
///
/// A tool with an `outputSchema` promises structured results, and a refusal
/// has none: when the user declines or cancels and the handler passes it on,
/// the result is the refusal text ([`ToolDef::on_refusal`](crate::ToolDef::on_refusal),
/// or a sentence naming the question) with `isError: true`, so that clients
/// checking results against the schema read it as the failure it is. A
/// handler that wants a structured answer to a refusal catches it
/// ([`Interrupt::is_refusal`](crate::Interrupt::is_refusal)) and returns one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::default())
    }
}

impl<T: Serialize + schemars::JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        let value = serde_json::to_value(&self.0)?;
        if !value.is_object() {
            return Err(HandlerError::msg(format!(
                "structured content must be a JSON object, and {} is not one",
                std::any::type_name::<T>()
            )));
        }
        Ok(CallToolResult::structured(value))
    }

    fn output_schema() -> Option<JsonObject> {
        Some(crate::json_schema::object_schema_of::<T>())
    }
}

impl<T: IntoToolResult, E: Into<HandlerError>> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        self.map_err(Into::into).and_then(T::into_tool_result)
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

/// A prompt handler's return type: `String` (one user message),
/// `Vec<PromptMessage>`, [`GetPromptResult`], and `Result`s of these.
pub trait IntoPromptResult {
    /// The result, or why the handler stopped short of it.
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        Ok(self)
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        vec![PromptMessage::user_text(self)].into_prompt_result()
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        Ok(GetPromptResult {
            messages: self,
            ..GetPromptResult::default()
        })
    }
}

impl<T: IntoPromptResult, E: Into<HandlerError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, HandlerError> {
        self.map_err(Into::into).and_then(T::into_prompt_result)
    }
}

/// A resource handler's return type: `String` (text at the URI read, with the
/// declared MIME type), `Vec<u8>` (a blob), `Vec<ResourceContents>`,
/// [`ReadResourceResult`], and `Result`s of these (so `?` on
/// [`NotFound`](crate::NotFound) answers "resource not found").
pub trait IntoResourceResult {
    /// The result for `uri`, or why the handler stopped short of it.
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError>;
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError> {
        Ok(self)
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError> {
        Ok(ReadResourceResult {
            contents: self,
            ..ReadResourceResult::default()
        })
    }
}

impl IntoResourceResult for String {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError> {
        vec![ResourceContents::text(uri, mime_type, self)].into_resource_result(uri, mime_type)
    }
}

impl IntoResourceResult for Vec<u8> {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError> {
        use base64::Engine as _;
        let blob = ResourceContents::Blob(BlobResourceContents {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64::engine::general_purpose::STANDARD.encode(self),
            meta: None,
        });
        vec![blob].into_resource_result(uri, mime_type)
    }
}

impl<T: IntoResourceResult, E: Into<HandlerError>> IntoResourceResult for Result<T, E> {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, HandlerError> {
        self.map_err(Into::into)
            .and_then(|t| t.into_resource_result(uri, mime_type))
    }
}

/// A tool's failure as the model sees it: a result with `isError: true`.
pub(crate) fn tool_failure(error: &HandlerError) -> CallToolResult {
    match &error.0 {
        Kind::NotFound => CallToolResult::error("Not found."),
        _ => CallToolResult::error(error.to_string()),
    }
}
