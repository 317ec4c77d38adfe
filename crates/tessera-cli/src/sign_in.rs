//! Signing in from a terminal: a loopback listener for the redirect, the
//! browser opened only after the URL is shown, tokens kept per server in the
//! user's config directory (mode 0600).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tessera_client::{
    Authorizer, BoxFuture, ClientError, EnterpriseSignIn, OAuthConfig, StoredTokens, TokenStore,
};
use tokio::net::TcpListener;

/// How long a sign-in may take in the browser (`TESSERA_SIGN_IN_TIMEOUT_SECS`, default 300).
fn sign_in_timeout() -> Duration {
    let secs = std::env::var("TESSERA_SIGN_IN_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(secs)
}

/// How the CLI signs in without a browser: as a client of its own, as a
/// workload, or through the user's enterprise identity provider. Each flag
/// has an environment variable (better for secrets: a command line is seen
/// by every user of the machine).
#[derive(clap::Args, Default)]
#[command(next_help_heading = "Signing in without a browser")]
pub struct SignInArgs {
    /// Sign in as this pre-registered OAuth client: the client_credentials
    /// grant, with --client-secret or --client-key-file (with
    /// --workload-token-file or --id-token-file: the client id they sign in as).
    #[arg(long, env = "TESSERA_CLIENT_ID", global = true, value_name = "ID")]
    client_id: Option<String>,
    /// The client's secret.
    #[arg(
        long,
        env = "TESSERA_CLIENT_SECRET",
        global = true,
        hide_env_values = true,
        value_name = "SECRET"
    )]
    client_secret: Option<String>,
    /// A private key the client proves itself with instead of a secret
    /// (private_key_jwt): PEM (EC P-256 or RSA) or a JWK (EC P-256).
    #[arg(
        long,
        env = "TESSERA_CLIENT_KEY_FILE",
        global = true,
        value_name = "FILE"
    )]
    client_key_file: Option<PathBuf>,
    /// The issuer the client is registered with (its credentials go to no other).
    #[arg(long, env = "TESSERA_CLIENT_ISSUER", global = true, value_name = "URL")]
    client_issuer: Option<String>,
    /// A file holding a JWT the platform issued this workload (a Kubernetes
    /// service account token, a cloud identity token), read at each run:
    /// signs in with it through the JWT bearer grant.
    #[arg(
        long,
        env = "TESSERA_WORKLOAD_TOKEN_FILE",
        global = true,
        value_name = "FILE"
    )]
    workload_token_file: Option<PathBuf>,
    /// Enterprise-managed sign-in: a file holding the user's ID token from
    /// the enterprise identity provider, exchanged there for a grant to the
    /// server's authorization server (needs --idp-token-endpoint,
    /// --idp-client-id, and --client-id/--client-secret for the server's).
    #[arg(
        long,
        env = "TESSERA_ID_TOKEN_FILE",
        global = true,
        value_name = "FILE",
        requires_all = ["idp_token_endpoint", "idp_client_id", "client_id"]
    )]
    id_token_file: Option<PathBuf>,
    /// The enterprise identity provider's token endpoint.
    #[arg(
        long,
        env = "TESSERA_IDP_TOKEN_ENDPOINT",
        global = true,
        value_name = "URL"
    )]
    idp_token_endpoint: Option<String>,
    /// This client's id at the identity provider.
    #[arg(long, env = "TESSERA_IDP_CLIENT_ID", global = true, value_name = "ID")]
    idp_client_id: Option<String>,
    /// This client's secret at the identity provider.
    #[arg(
        long,
        env = "TESSERA_IDP_CLIENT_SECRET",
        global = true,
        hide_env_values = true,
        value_name = "SECRET"
    )]
    idp_client_secret: Option<String>,
    /// Never bind tokens to a key with DPoP (otherwise used where both the
    /// server and its authorization server take it).
    #[arg(long, env = "TESSERA_NO_DPOP", global = true)]
    no_dpop: bool,
}

/// A non-empty value (an empty environment variable is no value).
fn given(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.is_empty())
}

/// The text of `file`, trimmed; `flag` names it in the error.
fn read(file: &std::path::Path, flag: &str) -> Result<String, String> {
    std::fs::read_to_string(file)
        .map(|text| text.trim().to_owned())
        .map_err(|e| format!("cannot read {flag} {}: {e}", file.display()))
}

/// The OAuth configuration of the CLI: a loopback redirect on a free port and
/// the token file; `interactive` says whether a person may be sent to a
/// browser. With [`SignInArgs`] for a machine or enterprise sign-in, that
/// instead: no browser, no prompt, nothing kept on disk.
pub async fn oauth_config(interactive: bool, args: &SignInArgs) -> Result<OAuthConfig, String> {
    let key = match &args.client_key_file {
        Some(path) => Some(read(path, "--client-key-file")?),
        None => None,
    };
    let pre_registered = |secret: Option<String>, key: Option<String>| {
        given(&args.client_id).map(|client_id| tessera_client::PreRegistered {
            client_id,
            client_secret: secret,
            issuer: given(&args.client_issuer),
            private_key: key,
        })
    };
    let machine = |pre_registered| OAuthConfig {
        redirect_uri: "http://127.0.0.1/unused".into(),
        client_name: "tessera-cli".into(),
        client_metadata_url: None,
        pre_registered,
        authorizer: Arc::new(NoBrowser),
        store: None,
        client_credentials: false,
        workload_jwt: None,
        enterprise: None,
        dpop: !args.no_dpop,
    };
    if let Some(path) = &args.workload_token_file {
        // Read at each run: platforms rotate these tokens.
        return Ok(OAuthConfig {
            workload_jwt: Some(read(path, "--workload-token-file")?),
            ..machine(pre_registered(None, None))
        });
    }
    if let Some(path) = &args.id_token_file {
        let (Some(endpoint), Some(idp_client)) =
            (given(&args.idp_token_endpoint), given(&args.idp_client_id))
        else {
            return Err(
                "--id-token-file needs --idp-token-endpoint and --idp-client-id (the identity provider's token endpoint and this client's id there)".into(),
            );
        };
        let mut enterprise =
            EnterpriseSignIn::id_token(read(path, "--id-token-file")?, endpoint, idp_client);
        enterprise.client_secret = given(&args.idp_client_secret);
        return Ok(OAuthConfig {
            enterprise: Some(enterprise),
            ..machine(pre_registered(given(&args.client_secret), key))
        });
    }
    let secret = given(&args.client_secret);
    if given(&args.client_id).is_some() && (secret.is_some() || key.is_some()) {
        return Ok(OAuthConfig {
            client_credentials: true,
            ..machine(pre_registered(secret, key))
        });
    }
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen for the sign-in redirect: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    Ok(OAuthConfig {
        redirect_uri,
        client_name: "tessera-cli".into(),
        client_metadata_url: None,
        pre_registered: None,
        authorizer: Arc::new(Loopback {
            listener: tokio::sync::Mutex::new(listener),
            interactive,
        }),
        store: Some(Arc::new(TokenFile::default_location()?)),
        client_credentials: false,
        workload_jwt: None,
        enterprise: None,
        dpop: !args.no_dpop,
    })
}

/// The authorizer of a machine sign-in: never asked (the grant has no browser step).
struct NoBrowser;

impl Authorizer for NoBrowser {
    fn authorize<'a>(
        &'a self,
        _authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async {
            Err(ClientError::Auth(
                "signing in without a browser (--client-id, --workload-token-file, --id-token-file) never opens one".into(),
            ))
        })
    }
}

/// Shows the authorization URL, opens a browser, and waits for the redirect on 127.0.0.1.
struct Loopback {
    listener: tokio::sync::Mutex<TcpListener>,
    interactive: bool,
}

impl Authorizer for Loopback {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let browser = std::env::var("BROWSER").ok().filter(|b| !b.is_empty());
            if !self.interactive && browser.is_none() {
                return Err(ClientError::Auth(
                    "the server requires signing in, and there is no terminal or browser here: run `tessera login URL` first".into(),
                ));
            }
            // The URL first, so the person sees where they are sent.
            eprintln!(
                "tessera: sign in at\n  {}",
                crate::shown::line(authorization_url)
            );
            if !crate::browser::open(authorization_url) {
                eprintln!("tessera: (no browser could be opened; open the URL above yourself)");
            }
            let listener = self.listener.lock().await;
            let state = query_param(authorization_url, "state").unwrap_or_default();
            let limit = sign_in_timeout();
            tokio::time::timeout(limit, redirect(&listener, &state))
                .await
                .map_err(|_| {
                    ClientError::Auth(format!("no sign-in within {} s", limit.as_secs()))
                })?
        })
    }
}

/// The first value of query parameter `name` in `url` (form-decoded).
fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// How long one connection to the sign-in listener may take to send its request head.
const REDIRECT_HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Connections to the sign-in listener read at once; more are closed at once.
const REDIRECT_CONNECTIONS: usize = 16;

/// Waits for the authorization server's redirect carrying `state` (anything
/// else reaching the listener is turned away) and answers the browser. Each
/// connection is read on its own, within [`REDIRECT_HEAD_TIMEOUT`], so one
/// that sends nothing cannot hold up the browser's.
async fn redirect(listener: &TcpListener, state: &str) -> Result<String, ClientError> {
    let (found, mut redirected) = tokio::sync::mpsc::channel::<String>(1);
    let reading = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted
                .map_err(|e| ClientError::Auth(format!("sign-in listener: {e}")))?,
            Some(target) = redirected.recv() => {
                return Ok(format!("http://127.0.0.1:{port}{target}"));
            }
        };
        use std::sync::atomic::Ordering;
        if reading.fetch_add(1, Ordering::AcqRel) >= REDIRECT_CONNECTIONS {
            reading.fetch_sub(1, Ordering::AcqRel);
            continue;
        }
        let (found, reading, state) = (
            found.clone(),
            std::sync::Arc::clone(&reading),
            state.to_owned(),
        );
        tokio::spawn(async move {
            if let Ok(Some(target)) =
                tokio::time::timeout(REDIRECT_HEAD_TIMEOUT, answer_redirect(stream, &state)).await
            {
                let _ = found.try_send(target);
            }
            reading.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

/// Serves one connection (HTTP/1.1 on hyper): answers 200 to the redirect
/// carrying `state` and returns its target; anything else gets 404.
async fn answer_redirect(stream: tokio::net::TcpStream, state: &str) -> Option<String> {
    use http_body_util::Full;
    use hyper::{Method, Request, Response, StatusCode, body::Incoming};

    const PAGE: &str = "<!doctype html><title>Signed in</title><p>Signed in. You can close this window and return to the terminal.</p>";
    let found = Arc::new(std::sync::Mutex::new(None::<String>));
    let service = {
        let (found, state) = (Arc::clone(&found), state.to_owned());
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let target = request
                .uri()
                .path_and_query()
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default();
            let ours = request.method() == Method::GET
                && request.uri().path() == "/callback"
                && query_param(&target, "state").as_deref() == Some(state.as_str());
            let response = if ours {
                *found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(target);
                Response::builder()
                    .header(hyper::header::CONTENT_TYPE, "text/html; charset=utf-8")
                    .body(Full::new(bytes::Bytes::from_static(PAGE.as_bytes())))
            } else {
                Response::builder()
                    .status(StatusCode::NOT_FOUND)
                    .body(Full::new(bytes::Bytes::new()))
            };
            async move { response }
        })
    };
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .max_buf_size(8192)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
    found
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

/// Tokens by server URL in `tokens.json`, readable by the user alone.
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// `$TESSERA_CONFIG_DIR`, else `tessera` in the platform's config
    /// directory (`$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application
    /// Support` on macOS, `%APPDATA%` on Windows, as the `dirs` crate finds
    /// it); tokens kept in `~/.config/tessera` elsewhere than Linux are still found there.
    pub fn default_location() -> Result<Self, String> {
        let earlier = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/tessera"));
        let dir = std::env::var_os("TESSERA_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| earlier.clone().filter(|d| d.join("tokens.json").is_file()))
            .or_else(|| dirs::config_dir().map(|d| d.join("tessera")))
            .or(earlier)
            .ok_or("no config directory: set HOME or TESSERA_CONFIG_DIR")?;
        Ok(Self {
            path: dir.join("tokens.json"),
        })
    }

    /// Every kept token; `Err` when the file exists but cannot be read (it is then never overwritten).
    fn read(&self) -> Result<BTreeMap<String, StoredTokens>, String> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a token file ({e}); move it aside",
                    self.path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    fn write(&self, all: &BTreeMap<String, StoredTokens>) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(std::path::Path::new("."));
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        // A new file of our own each time (never an existing one or a link), then renamed over.
        let tmp = dir.join(format!(
            ".tokens.{}.{}.tmp",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&tmp).and_then(|mut file| {
            std::io::Write::write_all(&mut file, serde_json::to_string_pretty(all)?.as_bytes())?;
            file.sync_all()
        });
        match written.and_then(|()| std::fs::rename(&tmp, &self.path)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Forgets `server`'s tokens; whether there were any.
    pub fn remove(&self, server: &str) -> Result<bool, String> {
        let mut all = self.read()?;
        let had = all.remove(server).is_some();
        if had {
            self.write(&all)
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
        }
        Ok(had)
    }

    /// Where the file is.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl TokenStore for TokenFile {
    fn load(&self, server: &str) -> Option<StoredTokens> {
        match self.read() {
            Ok(mut all) => all.remove(server),
            Err(e) => {
                eprintln!("tessera: {e}");
                None
            }
        }
    }

    fn save(&self, server: &str, tokens: &StoredTokens) {
        let mut all = match self.read() {
            Ok(all) => all,
            Err(e) => {
                eprintln!("tessera: the tokens are not kept: {e}");
                return;
            }
        };
        all.insert(server.to_owned(), tokens.clone());
        if let Err(e) = self.write(&all) {
            eprintln!(
                "tessera: cannot keep the tokens in {}: {e}",
                self.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn query_parameters_are_found_and_decoded() {
        let url = "http://as/auth?client_id=a&state=x%2By%3D+z&e=%E2%82%AC&bad=%zz%";
        assert_eq!(query_param(url, "state").as_deref(), Some("x+y= z"));
        assert_eq!(query_param(url, "e").as_deref(), Some("€"));
        assert_eq!(query_param(url, "bad").as_deref(), Some("%zz%"));
        assert_eq!(query_param(url, "missing"), None);
    }

    /// Issue #27, finding 6: a connection to the sign-in listener that sends
    /// nothing (or the wrong request) does not hold up the browser's redirect.
    #[tokio::test]
    async fn an_idle_connection_does_not_block_the_sign_in() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let waiting = tokio::spawn(async move { redirect(&listener, "s1").await });
        let _idle = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut wrong = tokio::net::TcpStream::connect(addr).await.unwrap();
        wrong
            .write_all(b"GET /callback?state=other HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut browser = tokio::net::TcpStream::connect(addr).await.unwrap();
        browser
            .write_all(b"GET /callback?code=c&state=s1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("the redirect is taken while the idle connection waits")
            .unwrap()
            .unwrap();
        assert_eq!(
            got,
            format!("http://127.0.0.1:{}/callback?code=c&state=s1", addr.port())
        );
        let mut answer = String::new();
        browser.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}
