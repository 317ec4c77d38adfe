//! The key from AWS Secrets Manager, through the AWS Parameters and Secrets
//! Lambda Extension (the layer AWS recommends for reading secrets in a
//! function: no SDK, a cache, a local HTTP endpoint).
//!
//! With `MRTR_REQUEST_STATE_SECRET_ID` naming a secret (its name or ARN) and
//! no key in the environment, the function's start asks the extension:
//!
//! ```text
//! GET http://localhost:$PARAMETERS_SECRETS_EXTENSION_HTTP_PORT/secretsmanager/get?secretId=ID
//! X-Aws-Parameters-Secrets-Token: $AWS_SESSION_TOKEN
//! ```
//!
//! (port 2773 unless set). The answer is GetSecretValue's JSON; its
//! `SecretString` is the key itself, or a JSON object holding
//! `MRTR_REQUEST_STATE_KEYS` or `MRTR_REQUEST_STATE_KEY` (the console's
//! key/value form). The function's role needs `secretsmanager:GetSecretValue`
//! on the secret. A secret that cannot be read stops the start, naming why.

use http_body_util::Full;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use tessera_http::Vars;
use tessera_state::{KEY_VAR, KEYS_VAR, KeyRing};

/// The variable naming the secret that holds the key.
pub const SECRET_ID_VAR: &str = "MRTR_REQUEST_STATE_SECRET_ID";

/// The extension's port unless `PARAMETERS_SECRETS_EXTENSION_HTTP_PORT` says otherwise.
pub const DEFAULT_EXTENSION_PORT: u16 = 2773;

/// The secret's `SecretString`, asked of the extension; an error is a sentence for the operator.
pub async fn fetch(vars: &dyn Vars, id: &str) -> Result<String, String> {
    let port = match vars.text("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT") {
        None => DEFAULT_EXTENSION_PORT,
        Some(p) => p.parse().map_err(|_| {
            format!("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT is {p:?}; it must be a port number")
        })?,
    };
    let token = vars.text("AWS_SESSION_TOKEN").ok_or(
        "AWS_SESSION_TOKEN is not set: the secrets extension only answers inside a Lambda \
         (locally, set MRTR_REQUEST_STATE_KEY instead)",
    )?;
    let url = format!(
        "http://localhost:{port}/secretsmanager/get?secretId={}",
        utf8_percent_encode(id, NON_ALPHANUMERIC)
    );
    let request = http::Request::get(&url)
        .header("x-aws-parameters-secrets-token", token)
        .body(Full::default())
        .map_err(|e| format!("{SECRET_ID_VAR} {id:?} makes no valid request: {e}"))?;
    let (status, body) = crate::local_http::exchange(request).await.map_err(|e| {
        format!(
            "{SECRET_ID_VAR}: the AWS Parameters and Secrets Lambda Extension did not answer on port {port} ({e}); \
             add its layer to the function"
        )
    })?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        return Err(format!(
            "{SECRET_ID_VAR}: the secret {id:?} could not be read ({status}: {}); \
             check its name and the function role's secretsmanager:GetSecretValue",
            text.trim()
        ));
    }
    let answer: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("{SECRET_ID_VAR}: the extension's answer is not JSON ({e})"))?;
    answer["SecretString"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{SECRET_ID_VAR}: the secret {id:?} has no SecretString (a binary secret cannot hold the key)"))
}

/// The key ring a secret's value holds: the key itself, or a JSON object
/// with `MRTR_REQUEST_STATE_KEYS` or `MRTR_REQUEST_STATE_KEY`.
///
/// ```
/// use tessera_lambda::secret::key_ring;
///
/// let plain = key_ring("k", "a secret of at least thirty-two bytes").unwrap();
/// let pairs = key_ring("k", r#"{"MRTR_REQUEST_STATE_KEY": "a secret of at least thirty-two bytes"}"#).unwrap();
/// assert_eq!(plain.active_id(), pairs.active_id());
/// assert!(key_ring("k", r#"{"password": "x"}"#).unwrap_err().contains("MRTR_REQUEST_STATE_KEY"));
/// ```
pub fn key_ring(id: &str, value: &str) -> Result<KeyRing, String> {
    let trimmed = value.trim();
    let ring = if trimmed.starts_with('{') {
        let pairs: Value = serde_json::from_str(trimmed)
            .map_err(|e| format!("the secret {id:?} looks like JSON but is not ({e})"))?;
        KeyRing::from_configured(pairs[KEY_VAR].as_str(), pairs[KEYS_VAR].as_str())
    } else {
        KeyRing::from_configured(Some(trimmed), None)
    };
    ring.map_err(|e| format!("the secret {id:?}: {e}"))?
        .ok_or_else(|| format!("the secret {id:?} holds neither {KEY_VAR} nor {KEYS_VAR}"))
}
