//! One client's authorization state with one protected server, and the flows
//! that change it.

use std::collections::BTreeSet;
use std::sync::Arc;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth_error;
use super::client_key::client_assertion;
use super::dpop::{AccessToken, DpopKey, ProofFor};
use super::metadata::{self, AuthorizationServer, ProtectedResource};
use super::pkce::{Pkce, random_token};
use super::{BearerChallenge, OAuthConfig};
use crate::ClientError;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TokenAuth {
    Basic,
    Post,
    /// RFC 7523: a JWT signed with the client's key (PEM or JWK).
    PrivateKeyJwt(String),
    None,
    /// No client identity at all (a workload's JWT bearer grant).
    Anonymous,
}

/// A client identity at one authorization server.
#[derive(Debug, Clone)]
struct Registration {
    issuer: String,
    client_id: String,
    client_secret: Option<String>,
    auth: TokenAuth,
}

/// Authorizations of a session at most (initial plus step-ups and re-authorizations).
const MAX_AUTHORIZATIONS: usize = 3;

/// What one client knows about signing in to one server.
pub(crate) struct OAuthSession {
    config: OAuthConfig,
    http: reqwest::Client,
    server: reqwest::Url,
    resource: Option<ProtectedResource>,
    issuer: Option<AuthorizationServer>,
    registration: Option<Registration>,
    access_token: Option<String>,
    refresh_token: Option<String>,
    /// The session's DPoP key, made once the server takes DPoP and its
    /// authorization server offers it.
    dpop: Option<Arc<DpopKey>>,
    /// Whether the access token is bound to that key (`token_type` DPoP).
    bound: bool,
    /// Whether the server challenged with the DPoP scheme.
    dpop_challenged: bool,
    /// Every scope requested so far (step-up asks for their union with the new ones).
    requested: BTreeSet<String>,
    authorizations: usize,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to the proof's key.
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
}

impl OAuthSession {
    pub(crate) fn new(config: OAuthConfig, server: reqwest::Url) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| ClientError::Config(e.to_string()))?;
        let stored = config.store.as_ref().and_then(|s| s.load(server.as_str()));
        let mut session = Self {
            config,
            http,
            server,
            resource: None,
            issuer: None,
            registration: None,
            access_token: None,
            refresh_token: None,
            dpop: None,
            bound: false,
            dpop_challenged: false,
            requested: BTreeSet::new(),
            authorizations: 0,
        };
        if let Some(t) = stored {
            session.registration = Some(Registration {
                issuer: t.issuer,
                client_id: t.client_id,
                client_secret: t.client_secret,
                auth: match t.token_endpoint_auth_method.as_str() {
                    "client_secret_basic" => TokenAuth::Basic,
                    "client_secret_post" => TokenAuth::Post,
                    _ => TokenAuth::None,
                },
            });
            session.access_token = Some(t.access_token);
            session.refresh_token = t.refresh_token;
            // Tokens bound to a key come back with it; without it they are dropped.
            match t.dpop_key.as_deref().map(DpopKey::from_stored) {
                Some(Ok(key)) => {
                    session.dpop = Some(Arc::new(key));
                    session.bound = true;
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "stored tokens dropped");
                    session.access_token = None;
                    session.refresh_token = None;
                }
                None => {}
            }
            session.requested = t.scopes.into_iter().collect();
        }
        Ok(session)
    }

    /// Takes a new access token (and whether it is bound to the DPoP key)
    /// and, where there is one, its refresh token.
    fn take(&mut self, token: TokenResponse) {
        self.bound = self.dpop.is_some()
            && token
                .token_type
                .as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case("DPoP"));
        self.access_token = Some(token.access_token);
        if token.refresh_token.is_some() {
            self.refresh_token = token.refresh_token;
        }
    }

    /// Keeps the current tokens in the store, if there is one.
    fn persist(&self) {
        let (Some(store), Some(registration), Some(access_token)) =
            (&self.config.store, &self.registration, &self.access_token)
        else {
            return;
        };
        let method = match &registration.auth {
            TokenAuth::Basic => "client_secret_basic",
            TokenAuth::Post => "client_secret_post",
            TokenAuth::None => "none",
            // A client that proves itself with its key, or a workload with
            // its token, signs in again each run: nothing is written down.
            TokenAuth::PrivateKeyJwt(_) | TokenAuth::Anonymous => return,
        };
        store.save(
            self.server.as_str(),
            &super::StoredTokens {
                issuer: registration.issuer.clone(),
                access_token: access_token.clone(),
                refresh_token: self.refresh_token.clone(),
                client_id: registration.client_id.clone(),
                client_secret: registration.client_secret.clone(),
                token_endpoint_auth_method: method.into(),
                scopes: self.requested.iter().cloned().collect(),
                // Bound tokens are worth nothing without their key.
                dpop_key: self
                    .dpop
                    .as_ref()
                    .filter(|_| self.bound)
                    .map(|key| key.to_stored()),
            },
        );
    }

    /// The access token, if signed in.
    pub(crate) fn token(&self) -> Option<&str> {
        self.access_token.as_deref()
    }

    /// The access token as requests present it: bearer, or with proofs of the session's key.
    pub(crate) fn credential(&self) -> Option<AccessToken> {
        Some(AccessToken {
            token: self.access_token.clone()?,
            dpop: self.dpop.clone().filter(|_| self.bound),
        })
    }

    /// The session's DPoP key, made when first needed: where the client may
    /// use DPoP, the server takes it (it challenged in the DPoP scheme, or
    /// its metadata names DPoP algorithms or requires bound tokens), and the
    /// authorization server offers ES256 for it (or names no algorithms
    /// while the server requires DPoP). A key is never used against a server
    /// that would not understand the proofs.
    fn dpop_key(&mut self, server: &AuthorizationServer) -> Result<(), ClientError> {
        if !self.config.dpop || self.dpop.is_some() {
            return Ok(());
        }
        let resource = self.resource.as_ref();
        let required = resource.is_some_and(|r| r.dpop_bound_access_tokens_required);
        let server_takes = self.dpop_challenged
            || required
            || resource.is_some_and(|r| r.dpop_signing_alg_values_supported.is_some());
        let issuer_offers = match &server.dpop_signing_alg_values_supported {
            Some(algs) => algs.iter().any(|a| a == super::dpop::ALGORITHM),
            None => required,
        };
        if server_takes && issuer_offers {
            self.dpop = Some(Arc::new(DpopKey::generate()?));
        }
        Ok(())
    }

    /// Answers a challenge (`401`, or `403` with `insufficient_scope`): signs
    /// in, refreshes, or steps up, so the request can be retried; an error when
    /// retrying cannot help.
    pub(crate) async fn answer(&mut self, status: u16, header: &str) -> Result<(), ClientError> {
        let dpop = BearerChallenge::parse_scheme(header, "DPoP");
        let bearer = BearerChallenge::parse(header);
        self.dpop_challenged |= dpop.is_some();
        // The challenge of the scheme the token was presented with comes first.
        let challenge = if self.bound {
            dpop.or(bearer)
        } else {
            bearer.or(dpop)
        }
        .unwrap_or_default();
        // The transport answered a new nonce already (RFC 9449 §9); a proof
        // refused is no matter of signing in again (a clock, a URL).
        if status == 401 && self.bound {
            match challenge.error.as_deref() {
                Some("use_dpop_nonce") => {
                    return Err(auth_error(
                        "the server keeps asking for a DPoP nonce it does not accept",
                    ));
                }
                Some("invalid_dpop_proof") => {
                    return Err(auth_error(format!(
                        "the server refused the DPoP proof (is this machine's clock right?): {header}"
                    )));
                }
                _ => {}
            }
        }
        if status == 403 {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Err(auth_error(format!(
                    "the server refused the request (403): {header}"
                )));
            }
            let wanted = challenge.scopes();
            if wanted.iter().all(|s| self.requested.contains(s)) {
                return Err(auth_error(format!(
                    "the server still wants scope {:?} after it was granted; giving up",
                    challenge.scope.unwrap_or_default()
                )));
            }
            // Step-up: everything asked so far, and what this request needs.
            let scopes: BTreeSet<String> = self.requested.iter().cloned().chain(wanted).collect();
            if self.resource.is_none() || self.issuer.is_none() {
                // Tokens kept from an earlier run: the metadata is not known yet.
                self.discover(&challenge).await?;
            }
            return self.authorize(scopes).await;
        }
        // 401. The metadata is read again: the server may have moved to another authorization server.
        let had_token = self.access_token.take().is_some();
        self.discover(&challenge).await?;
        // An expired token with a refresh token: refreshed once before signing in again.
        if had_token
            && let Some(refresh) = self.refresh_token.take()
            && self.refresh(&refresh).await.is_ok()
        {
            return Ok(());
        }
        let scopes: BTreeSet<String> = match challenge.scope.as_deref() {
            Some(s) => s.split_whitespace().map(str::to_owned).collect(),
            None => self
                .resource
                .as_ref()
                .and_then(|r| r.scopes_supported.clone())
                .unwrap_or_default()
                .into_iter()
                .collect(),
        };
        self.authorize(scopes).await
    }

    /// A request went through: the next challenge starts a fresh count of authorizations.
    pub(crate) fn succeeded(&mut self) {
        self.authorizations = 0;
    }

    /// Reads the Protected Resource Metadata and its authorization server's
    /// metadata; credentials of another authorization server are dropped.
    async fn discover(&mut self, challenge: &BearerChallenge) -> Result<(), ClientError> {
        let resource = metadata::protected_resource(
            &self.http,
            &self.server,
            challenge.resource_metadata.as_deref(),
        )
        .await?;
        let issuer = resource.authorization_servers[0].clone();
        if self.issuer.as_ref().is_none_or(|i| i.issuer != issuer) {
            self.issuer = Some(metadata::authorization_server(&self.http, &issuer).await?);
        }
        // Credentials and tokens of another authorization server are never presented to this one.
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.issuer != issuer)
        {
            self.registration = None;
            self.refresh_token = None;
            self.requested.clear();
        }
        self.resource = Some(resource);
        Ok(())
    }

    /// The authorization code flow for `scopes`, ending with a token.
    async fn authorize(&mut self, mut scopes: BTreeSet<String>) -> Result<(), ClientError> {
        if self.authorizations >= MAX_AUTHORIZATIONS {
            return Err(auth_error(format!(
                "authorized {MAX_AUTHORIZATIONS} times already in this session; giving up"
            )));
        }
        self.authorizations += 1;
        let (Some(resource), Some(server)) = (self.resource.clone(), self.issuer.clone()) else {
            return Err(auth_error(
                "no authorization server is known for this server yet",
            ));
        };
        // offline_access only where the authorization server offers it.
        if server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
        {
            scopes.insert("offline_access".into());
        }
        self.dpop_key(&server)?;
        if let Some(jwt) = self.config.workload_jwt.clone() {
            return self
                .jwt_bearer(&server, &resource.resource, &jwt, scopes)
                .await;
        }
        let registration = self.registration(&server).await?;
        if let Some(enterprise) = self.config.enterprise.clone() {
            return self
                .enterprise(
                    &server,
                    &registration,
                    &resource.resource,
                    &enterprise,
                    scopes,
                )
                .await;
        }
        if self.config.client_credentials {
            return self
                .client_credentials(&server, &registration, &resource.resource, scopes)
                .await;
        }
        let pkce = Pkce::new()?;
        let state = random_token(16)?;
        let mut url = reqwest::Url::parse(&server.authorization_endpoint)
            .map_err(|e| auth_error(format!("invalid authorization_endpoint: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("state", &state)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", &resource.resource);
            if let Some((name, scope)) = scope_param(&scopes) {
                q.append_pair(name, &scope);
            }
        }
        super::metadata::check_url(url.as_str())?;
        let callback = self
            .config
            .authorizer
            .authorize(url.as_str(), &self.config.redirect_uri)
            .await?;
        let code = read_callback(&callback, &state, &server)?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", pkce.verifier),
            ("resource", resource.resource.clone()),
        ];
        let token = self.token_request(&server, &registration, &form).await?;
        self.requested = scopes;
        self.refresh_token = None;
        self.take(token);
        self.persist();
        Ok(())
    }

    /// The `client_credentials` grant: a token for the client itself, asked
    /// of the token endpoint directly (no browser, no code).
    async fn client_credentials(
        &mut self,
        server: &AuthorizationServer,
        registration: &Registration,
        resource: &str,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), ClientError> {
        if registration.client_secret.is_none()
            && !matches!(registration.auth, TokenAuth::PrivateKeyJwt(_))
        {
            return Err(auth_error(
                "the client_credentials grant needs pre-registered credentials with a client secret or a private key",
            ));
        }
        // No person is there to come back later: offline access means nothing here.
        scopes.remove("offline_access");
        let mut form = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("resource", resource.to_owned()),
        ];
        form.extend(scope_param(&scopes));
        let token = self.token_request(server, registration, &form).await?;
        self.requested = scopes;
        self.refresh_token = None;
        self.take(token);
        self.persist();
        Ok(())
    }

    /// The JWT bearer grant (RFC 7523 §2.1) with the workload's own token.
    async fn jwt_bearer(
        &mut self,
        server: &AuthorizationServer,
        resource: &str,
        jwt: &str,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), ClientError> {
        scopes.remove("offline_access");
        let registration = match &self.config.pre_registered {
            Some(pre) => Registration {
                issuer: server.issuer.clone(),
                client_id: pre.client_id.clone(),
                client_secret: None,
                auth: TokenAuth::None,
            },
            None => Registration {
                issuer: server.issuer.clone(),
                client_id: String::new(),
                client_secret: None,
                auth: TokenAuth::Anonymous,
            },
        };
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
            ),
            ("assertion", jwt.to_owned()),
            ("resource", resource.to_owned()),
        ];
        form.extend(scope_param(&scopes));
        let token = self.token_request(server, &registration, &form).await?;
        self.requested = scopes;
        self.take(token);
        // The workload signs in again with its platform token: nothing else is kept.
        self.refresh_token = None;
        Ok(())
    }

    /// Enterprise-managed authorization (SEP-990): the user's single sign-on
    /// assertion exchanged at the identity provider for an identity assertion
    /// grant (ID-JAG) naming this authorization server and resource, then the
    /// grant traded here through the JWT bearer grant. An ID-JAG is good for
    /// one token request, so it is asked for each time, never kept.
    async fn enterprise(
        &mut self,
        server: &AuthorizationServer,
        registration: &Registration,
        resource: &str,
        enterprise: &super::EnterpriseSignIn,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), ClientError> {
        // The identity provider signs the user in again whenever needed.
        scopes.remove("offline_access");
        let scope = scope_param(&scopes).map(|(_, s)| s).unwrap_or_default();
        let grant = self
            .identity_assertion_grant(enterprise, &server.issuer, resource, &scope)
            .await?;
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
            ),
            ("assertion", grant),
            ("resource", resource.to_owned()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let token = self.token_request(server, registration, &form).await?;
        self.requested = scopes;
        self.refresh_token = None;
        self.take(token);
        self.persist();
        Ok(())
    }

    /// The RFC 8693 token exchange at the identity provider: "`audience`
    /// MUST be the issuer identifier of the Resource Authorization Server",
    /// `resource` the MCP server's, the client authenticated as at sign-on.
    async fn identity_assertion_grant(
        &self,
        enterprise: &super::EnterpriseSignIn,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, ClientError> {
        const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
        metadata::check_url(&enterprise.token_endpoint)?;
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            ("requested_token_type", ID_JAG),
            ("subject_token", enterprise.assertion.as_str()),
            ("subject_token_type", enterprise.assertion_type.as_str()),
            ("audience", audience),
            ("resource", resource),
            ("client_id", enterprise.client_id.as_str()),
        ];
        if let Some(secret) = &enterprise.client_secret {
            form.push(("client_secret", secret));
        }
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let request = self.http.post(&enterprise.token_endpoint);
        let answer: Value = post_form(request, &form)
            .await?
            .read("the identity provider")?;
        if answer["issued_token_type"].as_str() != Some(ID_JAG) {
            return Err(auth_error(format!(
                "the identity provider issued a {:?}, not an identity assertion grant ({ID_JAG})",
                answer["issued_token_type"]
                    .as_str()
                    .unwrap_or("token of no stated type")
            )));
        }
        answer["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| auth_error("the identity provider's answer carries no grant"))
    }

    /// A new access token from `refresh_token`.
    async fn refresh(&mut self, refresh_token: &str) -> Result<(), ClientError> {
        let (Some(resource), Some(server), Some(registration)) = (
            self.resource.clone(),
            self.issuer.clone(),
            self.registration.clone(),
        ) else {
            return Err(auth_error("nothing to refresh against"));
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.to_owned()),
            ("resource", resource.resource),
        ];
        let token = self.token_request(&server, &registration, &form).await?;
        // A refresh token not replaced stays in use.
        self.refresh_token = Some(refresh_token.to_owned());
        self.take(token);
        self.persist();
        Ok(())
    }

    /// A request to the token endpoint: `form` with the client's
    /// authentication, and a DPoP proof when the session has a key (asked
    /// again, once, with the nonce the server names in a `use_dpop_nonce`
    /// refusal: RFC 9449 §8).
    async fn token_request(
        &self,
        server: &AuthorizationServer,
        registration: &Registration,
        form: &[(&'static str, String)],
    ) -> Result<TokenResponse, ClientError> {
        let mut retried = false;
        loop {
            let mut form = form.to_vec();
            let mut request = self.http.post(&server.token_endpoint);
            match &registration.auth {
                TokenAuth::Basic => {
                    let secret = registration.client_secret.clone().unwrap_or_default();
                    let encode = |s: &str| {
                        url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                    };
                    let pair = format!("{}:{}", encode(&registration.client_id), encode(&secret));
                    request = request.header(
                        "Authorization",
                        format!(
                            "Basic {}",
                            base64::engine::general_purpose::STANDARD.encode(pair)
                        ),
                    );
                }
                TokenAuth::Post => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push((
                        "client_secret",
                        registration.client_secret.clone().unwrap_or_default(),
                    ));
                }
                TokenAuth::PrivateKeyJwt(key) => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push((
                        "client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                    ));
                    form.push((
                        "client_assertion",
                        client_assertion(key, &registration.client_id, &server.issuer)?,
                    ));
                }
                TokenAuth::None => form.push(("client_id", registration.client_id.clone())),
                TokenAuth::Anonymous => {}
            }
            if let Some(key) = &self.dpop {
                request = request.header(
                    "DPoP",
                    key.proof(
                        ProofFor::TokenEndpoint,
                        "POST",
                        &server.token_endpoint,
                        None,
                    )?,
                );
            }
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let answer = post_form(request, &form).await?;
            if let (Some(key), Some(nonce)) = (&self.dpop, &answer.dpop_nonce) {
                let new = key.remember_nonce(ProofFor::TokenEndpoint, nonce);
                if new && !retried && answer.refused_for("use_dpop_nonce") {
                    retried = true;
                    continue;
                }
            }
            return answer.read("the token endpoint");
        }
    }

    /// This client's identity at `server`: pre-registered credentials, a Client
    /// ID Metadata Document, or a dynamic registration, in that order.
    async fn registration(
        &mut self,
        server: &AuthorizationServer,
    ) -> Result<Registration, ClientError> {
        if let Some(r) = self
            .registration
            .as_ref()
            .filter(|r| r.issuer == server.issuer)
        {
            return Ok(r.clone());
        }
        let supported = server
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_default();
        let supports = |m: &str| supported.iter().any(|s| s == m);
        let registration = if let Some(pre) = self
            .config
            .pre_registered
            .clone()
            .filter(|p| p.issuer.as_ref().is_none_or(|i| *i == server.issuer))
        {
            let auth = match &pre.client_secret {
                _ if pre.private_key.is_some() => {
                    TokenAuth::PrivateKeyJwt(pre.private_key.clone().unwrap_or_default())
                }
                Some(_) if supports("client_secret_basic") || supported.is_empty() => {
                    TokenAuth::Basic
                }
                Some(_) if supports("client_secret_post") => TokenAuth::Post,
                Some(_) => TokenAuth::Basic,
                None => TokenAuth::None,
            };
            Registration {
                issuer: server.issuer.clone(),
                client_id: pre.client_id,
                client_secret: pre.client_secret,
                auth,
            }
        } else if let (true, Some(url)) = (
            server.client_id_metadata_document_supported,
            self.config.client_metadata_url.clone(),
        ) {
            Registration {
                issuer: server.issuer.clone(),
                client_id: url,
                client_secret: None,
                auth: TokenAuth::None,
            }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.register(server, endpoint).await?
        } else {
            return Err(auth_error(format!(
                "authorization server {} offers no way to register this client (no Client ID Metadata Document support, no registration endpoint, no pre-registered credentials)",
                server.issuer
            )));
        };
        self.registration = Some(registration.clone());
        Ok(registration)
    }

    /// RFC 7591 dynamic registration.
    async fn register(
        &self,
        server: &AuthorizationServer,
        endpoint: &str,
    ) -> Result<Registration, ClientError> {
        // Refresh tokens are asked for where the server offers them (or says nothing).
        let refresh = server
            .grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|g| g == "refresh_token"));
        let grant_types: &[&str] = if refresh {
            &["authorization_code", "refresh_token"]
        } else {
            &["authorization_code"]
        };
        let body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "application_type": "native",
            "grant_types": grant_types,
            "response_types": ["code"],
        });
        let response = self
            .http
            .post(endpoint)
            .json(&body)
            .send()
            .await
            .map_err(ClientError::Transport)?;
        let status = response.status();
        let answer: Value = response.json().await.map_err(|e| {
            auth_error(format!(
                "the registration endpoint's answer is not JSON: {e}"
            ))
        })?;
        if !status.is_success() {
            return Err(auth_error(format!(
                "dynamic registration refused (HTTP {status}): {answer}"
            )));
        }
        let client_id = answer["client_id"]
            .as_str()
            .ok_or_else(|| auth_error("dynamic registration returned no client_id"))?
            .to_owned();
        let client_secret = answer["client_secret"].as_str().map(str::to_owned);
        let auth = match answer["token_endpoint_auth_method"].as_str() {
            Some("client_secret_basic") => TokenAuth::Basic,
            Some("client_secret_post") => TokenAuth::Post,
            Some("none") => TokenAuth::None,
            _ if client_secret.is_some() => TokenAuth::Basic,
            _ => TokenAuth::None,
        };
        Ok(Registration {
            issuer: server.issuer.clone(),
            client_id,
            client_secret,
            auth,
        })
    }
}

/// The `scope` parameter of `scopes`, space-separated; none when there are none.
fn scope_param(scopes: &BTreeSet<String>) -> Option<(&'static str, String)> {
    (!scopes.is_empty()).then(|| {
        let joined: Vec<&str> = scopes.iter().map(String::as_str).collect();
        ("scope", joined.join(" "))
    })
}

/// What a token endpoint answered.
struct FormAnswer {
    status: reqwest::StatusCode,
    /// Its `DPoP-Nonce`, if any.
    dpop_nonce: Option<String>,
    text: String,
}

impl FormAnswer {
    /// Whether this is a refusal with OAuth error `code`.
    fn refused_for(&self, code: &str) -> bool {
        !self.status.is_success()
            && serde_json::from_str::<Value>(&self.text)
                .is_ok_and(|v| v.get("error").and_then(Value::as_str) == Some(code))
    }

    /// The answer as `T`; a refusal is an error quoting the answer's start
    /// (`who` names the endpoint).
    fn read<T: serde::de::DeserializeOwned>(self, who: &str) -> Result<T, ClientError> {
        if !self.status.is_success() {
            return Err(auth_error(format!(
                "{who} refused (HTTP {}): {}",
                self.status,
                self.text.chars().take(300).collect::<String>()
            )));
        }
        serde_json::from_str(&self.text)
            .map_err(|e| auth_error(format!("{who}'s answer is not a token: {e}")))
    }
}

/// POSTs `form` to a token endpoint.
async fn post_form(
    request: reqwest::RequestBuilder,
    form: &[(&str, &str)],
) -> Result<FormAnswer, ClientError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().copied())
        .finish();
    let response = request
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(ClientError::Transport)?;
    let status = response.status();
    let dpop_nonce = response
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.map_err(ClientError::Transport)?;
    Ok(FormAnswer {
        status,
        dpop_nonce,
        text,
    })
}

/// The authorization code from the redirect, after checking `state` and, per
/// RFC 9207, `iss`: compared exactly with the issuer when present; required
/// when the server says it sends it.
fn read_callback(
    callback: &str,
    state: &str,
    server: &AuthorizationServer,
) -> Result<String, ClientError> {
    let url = reqwest::Url::parse(callback)
        .map_err(|e| auth_error(format!("the authorization redirect is not a URL: {e}")))?;
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = param("error") {
        return Err(auth_error(format!(
            "authorization failed: {error}{}",
            param("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )));
    }
    match (
        param("iss"),
        server.authorization_response_iss_parameter_supported,
    ) {
        (Some(iss), _) if iss != server.issuer => {
            return Err(auth_error(format!(
                "the authorization response names issuer {iss:?}, not {:?}: refused (RFC 9207)",
                server.issuer
            )));
        }
        (None, true) => {
            return Err(auth_error(
                "the authorization server promises an iss parameter but the response has none: refused (RFC 9207)",
            ));
        }
        _ => {}
    }
    if param("state").as_deref() != Some(state) {
        return Err(auth_error(
            "the authorization response's state does not match: refused",
        ));
    }
    param("code").ok_or_else(|| auth_error("the authorization response has no code"))
}
