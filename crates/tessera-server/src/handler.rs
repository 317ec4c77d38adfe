//! Handlers as dispatch stores them: one erased shape for tools, prompts and resources.

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{BoxFuture, Context, HandlerError};

/// A handler producing results of type `R` from its context and input `X`.
pub(crate) type ErasedHandler<R, X> =
    Arc<dyn Fn(Context, X) -> BoxFuture<'static, Result<R, HandlerError>> + Send + Sync>;

/// Erases `f`, converting what it returns with `convert`.
pub(crate) fn erase<R, X, A, F, Fut, O>(
    f: F,
    parse: impl Fn(X) -> Result<A, HandlerError> + Send + Sync + 'static,
    convert: impl Fn(O) -> Result<R, HandlerError> + Copy + Send + Sync + 'static,
) -> ErasedHandler<R, X>
where
    R: Send + 'static,
    O: 'static,
    A: Send + 'static,
    F: Fn(Context, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
{
    Arc::new(move |ctx: Context, input: X| match parse(input) {
        Ok(a) => {
            let running = f(ctx, a);
            Box::pin(async move { convert(running.await) })
        }
        Err(e) => Box::pin(std::future::ready(Err(e))),
    })
}

/// Deserializes `A`, describing the first problem with its path.
pub(crate) fn parse_input<A: DeserializeOwned>(input: Value) -> Result<A, String> {
    // Input that fits is read directly; only a failure pays for tracking the path.
    if let Ok(parsed) = A::deserialize(&input) {
        return Ok(parsed);
    }
    // No arguments at all (`{}`) also fits a handler that takes `()`.
    if input.as_object().is_some_and(|o| o.is_empty())
        && let Ok(parsed) = A::deserialize(Value::Null)
    {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(input).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            inner.to_string()
        } else {
            format!("{path}: {inner}")
        }
    })
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
    fn input_errors_name_the_field() {
        let err = parse_input::<Args>(serde_json::json!({"current": "ten"})).unwrap_err();
        assert!(
            err.starts_with("current: invalid type: string \"ten\""),
            "{err}"
        );
        let err = parse_input::<Args>(serde_json::json!({})).unwrap_err();
        assert!(err.contains("missing field `current`"), "{err}");
        parse_input::<()>(serde_json::json!({})).unwrap();
        assert!(parse_input::<()>(serde_json::json!({"x": 1})).is_err());
    }
}
