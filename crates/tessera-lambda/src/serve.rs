//! The function's start and its invocations.

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::Arc;

use tessera_http::{McpBody, McpEndpoint};
use tessera_server::McpServer;

use crate::{LambdaConfig, LambdaSetup};

/// The whole `main` of a function: logging to stderr (CloudWatch), a tokio
/// runtime, then [`run`]; failure when the start failed.
pub fn main<F, E>(name: &str, build: F) -> ExitCode
where
    F: FnOnce(&LambdaSetup) -> Result<McpServer, E>,
    E: Display,
{
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time() // CloudWatch stamps every line
        .init();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: no tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(name, build)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Tells Lambda why the start failed (the runtime API's init error), so the
/// invocations waiting for this instance fail with the message rather than
/// time out. Outside a Lambda (no `AWS_LAMBDA_RUNTIME_API`) it does nothing.
async fn report_init_error(message: &str) {
    let Ok(api) = std::env::var("AWS_LAMBDA_RUNTIME_API") else {
        return;
    };
    let body =
        serde_json::json!({"errorMessage": message, "errorType": "Runtime.ConfigurationError"});
    // `host:port` on Lambda; emulators (cargo lambda watch) give a whole URL.
    let base = if api.starts_with("http://") {
        api.trim_end_matches('/').to_owned()
    } else {
        format!("http://{api}")
    };
    let request = http::Request::post(format!("{base}/2018-06-01/runtime/init/error"))
        .header(
            "lambda-runtime-function-error-type",
            "Runtime.ConfigurationError",
        )
        .header("content-type", "application/json")
        .body(http_body_util::Full::from(body.to_string()));
    let reported = match request {
        Ok(request) => crate::local_http::exchange(request).await.map(|_| ()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = reported {
        eprintln!("the init error could not be reported to the Lambda runtime API at {api}: {e}");
    }
}

/// Reads the configuration ([`LambdaConfig::from_env`]), builds the server
/// with `build`, and serves invocations until the runtime API stops. A
/// failed start writes `NAME: message` to stderr (CloudWatch) and reports
/// it to the runtime API as the init error, so waiting invocations fail at
/// once; the message is returned too.
pub async fn run<F, E>(name: &str, build: F) -> Result<(), String>
where
    F: FnOnce(&LambdaSetup) -> Result<McpServer, E>,
    E: Display,
{
    let started = async {
        let LambdaConfig { options, setup } = LambdaConfig::from_env(name).await?;
        let server = build(&setup).map_err(|e| format!("the server could not be built: {e}"))?;
        Ok::<_, String>((server, options))
    };
    let (server, options) = match started.await {
        Ok(started) => started,
        Err(message) => {
            eprintln!("{name}: {message}");
            report_init_error(&message).await;
            return Err(message);
        }
    };
    let endpoint = McpEndpoint::new(Arc::new(server), options);
    tracing::info!("serving MCP invocations");
    // Invocations one at a time, or as many at once as Lambda Managed
    // Instances allow (AWS_LAMBDA_MAX_CONCURRENCY).
    lambda_http::run_concurrent(lambda_http::service_fn(
        move |request: lambda_http::Request| {
            let endpoint = endpoint.clone();
            async move {
                // The endpoint wants a body error that is a `std::error::Error`;
                // an invocation's body is already whole, so none occurs.
                let request = request.map(|body| {
                    http_body_util::BodyExt::map_err(body, |e| std::io::Error::other(e.to_string()))
                });
                Ok::<_, std::convert::Infallible>(buffered(endpoint.respond(request).await).await)
            }
        },
    ))
    .await
    .map_err(|e| format!("the Lambda runtime stopped: {e}"))
}

/// The endpoint's answer read whole: a Lambda response is sent at once (an
/// event stream's events arrive together, then the stream ends).
async fn buffered(response: http::Response<McpBody>) -> http::Response<lambda_http::Body> {
    let (parts, body) = response.into_parts();
    let bytes = match http_body_util::BodyExt::collect(body).await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let body = match String::from_utf8(bytes.to_vec()) {
        Ok(text) if text.is_empty() => lambda_http::Body::Empty,
        Ok(text) => lambda_http::Body::Text(text),
        Err(binary) => lambda_http::Body::Binary(binary.into_bytes()),
    };
    http::Response::from_parts(parts, body)
}
