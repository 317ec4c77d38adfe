//! Methods of the server's own: the requests and notifications an extension
//! adds to MCP, with typed params.
//!
//! A request method answers with a result (any serialisable object; the
//! server adds `resultType` and `_meta` as for every 2026-07-28 result); a
//! notification method returns nothing and its caller is told nothing. Both
//! run through the server's [middleware](crate::middleware) like every
//! request, over every transport. Names in a namespace MCP defines
//! (`tools/…`, `resources/…`, `notifications/progress`, …) are refused when
//! the server is built, so an extension can never shadow the protocol.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::handler::parse_input;
use crate::{BoxFuture, BuildError, Context, HandlerError, ServerError};

type RequestHandler =
    Arc<dyn Fn(Context, Value) -> BoxFuture<'static, Result<Value, ServerError>> + Send + Sync>;
type NotificationHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, ()> + Send + Sync>;

/// A method of the server's own, registered with
/// [`McpServerBuilder::method`](crate::McpServerBuilder::method).
///
/// ```
/// use tessera_server::{Context, McpServer, MethodDef};
///
/// #[derive(serde::Deserialize)]
/// struct Echo { text: String }
///
/// let server = McpServer::builder("demo", "1.0.0")
///     .method(MethodDef::request("com.example/echo", |_: Context, p: Echo| async move {
///         Ok::<_, tessera_server::HandlerError>(serde_json::json!({ "text": p.text }))
///     }))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct MethodDef {
    pub(crate) name: String,
    pub(crate) kind: MethodKind,
}

#[derive(Clone)]
pub(crate) enum MethodKind {
    Request(RequestHandler),
    Notification(NotificationHandler),
}

impl MethodDef {
    /// A request method `name`: `handler` gets the params (without `_meta`)
    /// as `P` and answers with `R`, which must serialise to a JSON object.
    /// Params that do not fit are refused with -32602 naming the field; a
    /// [`HandlerError`] becomes -32602 (invalid params, not found) or -32603.
    pub fn request<P, R, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + 'static,
        F: Fn(Context, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    {
        let name: String = name.into();
        let label: Arc<str> = name.as_str().into();
        let handler: RequestHandler = Arc::new(move |ctx, params| {
            let label = Arc::clone(&label);
            let params = match parse_input::<P>(params) {
                Ok(p) => p,
                Err(problem) => {
                    return Box::pin(std::future::ready(Err(ServerError::invalid_params(
                        format!("Invalid {label} params: {problem}"),
                    ))));
                }
            };
            let running = handler(ctx, params);
            Box::pin(async move {
                let result = running
                    .await
                    .map_err(|e| e.into_request_error(&label, &format!("the {label} handler")))?;
                match serde_json::to_value(result) {
                    Ok(Value::Object(o)) => Ok(Value::Object(o)),
                    Ok(_) => Err(ServerError::Internal {
                        message: format!(
                            "the {label} handler answered with something other than an object"
                        ),
                    }),
                    Err(e) => Err(ServerError::Internal {
                        message: format!("the {label} result cannot be serialised: {e}"),
                    }),
                }
            })
        });
        Self {
            name,
            kind: MethodKind::Request(handler),
        }
    }

    /// A notification method `name`: `handler` gets the params (without
    /// `_meta`) as `P`; what it needs besides, it captures. Params that do
    /// not fit are logged and dropped (a notification has no one to answer).
    /// The transport waits for the handler before it reads on (stdio) or
    /// answers 202 (HTTP): keep it short, or spawn the work.
    pub fn notification<P, F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let name: String = name.into();
        let label: Arc<str> = name.as_str().into();
        let handler: NotificationHandler = Arc::new(move |params| match parse_input::<P>(params) {
            Ok(p) => Box::pin(handler(p)),
            Err(problem) => {
                tracing::warn!(method = %label, %problem, "notification params do not fit; dropped");
                Box::pin(std::future::ready(()))
            }
        });
        Self {
            name,
            kind: MethodKind::Notification(handler),
        }
    }

    /// The method's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Refuses a name MCP defines, or one no client could send.
    pub(crate) fn check(&self) -> Result<(), BuildError> {
        let name = &self.name;
        if name.is_empty() || name.len() > 256 || name.chars().any(char::is_control) {
            return Err(BuildError(format!(
                "method {:?}: a method name is 1 to 256 characters, none of them control characters",
                name.escape_debug()
            )));
        }
        let reserved = match self.kind {
            MethodKind::Request(_) => {
                RESERVED_NAMESPACES.iter().any(|ns| {
                    name.strip_prefix(ns)
                        .is_some_and(|rest| rest.starts_with('/'))
                }) || ["initialize", "ping"].contains(&name.as_str())
            }
            MethodKind::Notification(_) => RESERVED_NOTIFICATIONS.contains(&name.as_str()),
        };
        if reserved {
            return Err(BuildError(format!(
                "method {name:?} is in a namespace MCP defines: name it after your extension, \
                 e.g. \"com.example/{}\"",
                name.rsplit('/').next().unwrap_or(name)
            )));
        }
        Ok(())
    }
}

/// The method namespaces of MCP and its official extensions (requests).
const RESERVED_NAMESPACES: &[&str] = &[
    "server",
    "tools",
    "prompts",
    "resources",
    "completion",
    "logging",
    "sampling",
    "elicitation",
    "roots",
    "tasks",
    "skills",
    "subscriptions",
    "notifications",
];

/// The notifications MCP defines.
const RESERVED_NOTIFICATIONS: &[&str] = &[
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "notifications/message",
    "notifications/roots/list_changed",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/subscriptions/acknowledged",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
];

impl crate::McpServer {
    /// Serves a request to a method of the server's own: the params without
    /// `_meta`, the result marked complete (2026-07-28 results say their type).
    pub(crate) async fn call_method(
        &self,
        name: &str,
        params: Option<Value>,
        incoming: crate::incoming::Incoming,
    ) -> Result<Value, ServerError> {
        let Some(MethodKind::Request(handler)) = self.methods.get(name).map(|m| &m.kind) else {
            return Err(ServerError::MethodNotFound {
                method: name.to_owned(),
            });
        };
        let ctx = Context::new(
            incoming,
            name,
            &self.app_state,
            indexmap::IndexMap::new(),
            indexmap::IndexMap::new(),
            None,
            crate::context::TaskMode::Synchronous,
        );
        let mut result = handler(ctx, without_meta(params)).await?;
        if let Some(o) = result.as_object_mut() {
            o.entry("resultType").or_insert_with(|| "complete".into());
        }
        Ok(result)
    }

    /// Handles a notification: a method of the server's own runs its
    /// handler; any other is noted in the log (the transports act on the
    /// ones MCP defines, such as cancellation, themselves).
    pub async fn handle_notification(&self, method: &str, params: Option<Value>) {
        match self.methods.get(method).map(|m| &m.kind) {
            Some(MethodKind::Notification(handler)) => handler(without_meta(params)).await,
            _ => tracing::debug!(method = %method.escape_debug(), "notification received"),
        }
    }
}

/// The params as a handler takes them: `_meta` (the envelope) removed; none is `{}`.
fn without_meta(params: Option<Value>) -> Value {
    match params {
        Some(Value::Object(mut o)) => {
            o.remove("_meta");
            Value::Object(o)
        }
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(other) => other,
    }
}
