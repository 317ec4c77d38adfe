//! Signing in to a protected MCP server (2026-07-28 `basic/authorization`):
//! Protected Resource Metadata from the 401, authorization-server discovery,
//! client registration (pre-registered, Client ID Metadata Document, or
//! dynamic), PKCE S256, `resource` on both requests, the scope strategy,
//! RFC 9207 `iss` checks, refresh, and step-up on `insufficient_scope`;
//! machine sign-in (client credentials, workload identity), enterprise-managed
//! authorization, and DPoP-bound tokens.

mod client_key;
mod dpop;
mod metadata;
mod pkce;
mod session;

use std::sync::Arc;

pub(crate) use dpop::AccessToken;
pub(crate) use session::OAuthSession;
pub use tessera_protocol::BearerChallenge;
use tessera_protocol::BoxFuture;

use crate::ClientError;

/// A sign-in failure, said as `message`.
fn auth_error(message: impl Into<String>) -> ClientError {
    ClientError::Auth(message.into())
}

/// Credentials registered with an authorization server beforehand.
#[derive(Debug, Clone)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The client secret, for confidential clients.
    pub client_secret: Option<String>,
    /// The issuer they were registered with; `None` uses them with any.
    pub issuer: Option<String>,
    /// A private key the client proves itself with instead of a secret
    /// (RFC 7523 `private_key_jwt` client assertions): a PEM (PKCS#8; EC
    /// P-256 signs ES256, RSA signs RS256) or a JWK of an EC P-256 key.
    pub private_key: Option<String>,
}

/// Takes the user through the authorization URL and returns the URL the
/// authorization server redirected back to (with `code`, `state`, `iss`).
pub trait Authorizer: Send + Sync {
    /// Sends the user to `authorization_url`; resolves to the redirect's full URL.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>>;
}

/// Follows the authorization URL without a person: for authorization servers
/// that redirect at once (tests, pre-approved clients). The redirect is read
/// from `Location`, never followed.
pub struct HeadlessAuthorizer {
    http: reqwest::Client,
}

impl HeadlessAuthorizer {
    /// A headless authorizer.
    pub fn new() -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Config(e.to_string()))?;
        Ok(Self { http })
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
        _redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let response = self
                .http
                .get(authorization_url)
                .send()
                .await
                .map_err(ClientError::Transport)?;
            response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| {
                    ClientError::Auth(format!(
                        "the authorization endpoint answered HTTP {} without redirecting back",
                        response.status()
                    ))
                })
        })
    }
}

/// What a signed-in client keeps for one server between runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredTokens {
    /// The authorization server that issued them.
    pub issuer: String,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// The client id registered with the issuer.
    pub client_id: String,
    /// Its secret, for confidential registrations.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint: `client_secret_basic`, `client_secret_post` or `none`.
    pub token_endpoint_auth_method: String,
    /// The scopes granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The DPoP key the access and refresh tokens are bound to (its PKCS#8
    /// DER, base64), when they are: kept with them, since they are worth
    /// nothing without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

/// Keeps tokens between runs, by server URL.
pub trait TokenStore: Send + Sync {
    /// The tokens kept for `server`.
    fn load(&self, server: &str) -> Option<StoredTokens>;
    /// Keeps `tokens` for `server`.
    fn save(&self, server: &str, tokens: &StoredTokens);
}

/// How a client signs in when a server challenges it.
#[derive(Clone)]
pub struct OAuthConfig {
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The client's name in dynamic registration.
    pub client_name: String,
    /// The client's Client ID Metadata Document URL, used as its `client_id`
    /// where the authorization server supports that.
    pub client_metadata_url: Option<String>,
    /// Credentials registered beforehand, tried first.
    pub pre_registered: Option<PreRegistered>,
    /// Who takes the user through authorization.
    pub authorizer: Arc<dyn Authorizer>,
    /// Where tokens are kept between runs, if anywhere.
    pub store: Option<Arc<dyn TokenStore>>,
    /// Sign in as the client itself, with the OAuth `client_credentials`
    /// grant (SEP-1046): no browser and no person, for CI jobs and agents.
    /// Needs [`pre_registered`](Self::pre_registered) credentials with a
    /// secret (sent as `client_secret_basic`, or `client_secret_post` where
    /// the authorization server offers only that); `authorizer` is not used.
    pub client_credentials: bool,
    /// A JWT the platform issued to this workload (a Kubernetes service
    /// account token, a cloud identity token): sign in with it through the
    /// RFC 7523 JWT bearer grant (workload identity federation, SEP-1933),
    /// as the pre-registered `client_id` when there is one. A refusal is
    /// reported as it is: no retry, no other grant.
    pub workload_jwt: Option<String>,
    /// Sign in through the user's enterprise identity provider
    /// (enterprise-managed authorization, SEP-990): the identity provider
    /// exchanges the user's single sign-on assertion for an identity
    /// assertion grant for this server's authorization server, which the
    /// client then trades for an access token with the JWT bearer grant,
    /// authenticating with its [`pre_registered`](Self::pre_registered)
    /// credentials. No browser: the person signed in already.
    pub enterprise: Option<EnterpriseSignIn>,
    /// Bind access tokens to a key made for this session with DPoP (RFC 9449,
    /// the MCP DPoP extension) wherever the server takes DPoP and its
    /// authorization server offers it:
    /// every request then carries a fresh proof of the key, and a token that
    /// leaks is worth nothing without it. Bound tokens go to the
    /// [`store`](Self::store) with their key.
    pub dpop: bool,
}

/// What a client holds to sign in through an enterprise identity provider
/// (SEP-990): the user's assertion from single sign-on, and the provider's
/// token endpoint with the client's credentials there.
#[derive(Clone)]
pub struct EnterpriseSignIn {
    /// The user's assertion from single sign-on: an OpenID Connect ID token
    /// (or a SAML assertion, with [`assertion_type`](Self::assertion_type)).
    pub assertion: String,
    /// Its RFC 8693 token type: `urn:ietf:params:oauth:token-type:id_token`
    /// ([`EnterpriseSignIn::ID_TOKEN`]) or `…:saml2`.
    pub assertion_type: String,
    /// The identity provider's token endpoint (RFC 8693 token exchange).
    pub token_endpoint: String,
    /// This client's id at the identity provider (the ID token's audience).
    pub client_id: String,
    /// Its secret there, for confidential clients.
    pub client_secret: Option<String>,
}

impl EnterpriseSignIn {
    /// The token type of an OpenID Connect ID token.
    pub const ID_TOKEN: &'static str = "urn:ietf:params:oauth:token-type:id_token";

    /// Signs in with `id_token`, exchanged at `token_endpoint` as `client_id`.
    pub fn id_token(
        id_token: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            assertion: id_token.into(),
            assertion_type: Self::ID_TOKEN.into(),
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
        }
    }
}

impl std::fmt::Debug for EnterpriseSignIn {
    /// The assertion and the secret are credentials: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseSignIn")
            .field("assertion_type", &self.assertion_type)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}
