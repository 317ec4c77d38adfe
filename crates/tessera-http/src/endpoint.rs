//! The endpoint: the check ladder of the 2026-07-28 Streamable HTTP transport.

use std::sync::Arc;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Method, Response, StatusCode, header};
use serde_json::Value;
use tessera_protocol::{
    INVALID_REQUEST, RequestId, STATELESS_PROTOCOL_VERSIONS, SUBSCRIPTIONS_LISTEN, TRANSPORT_ERROR,
};
use tessera_server::intake::{self, Message, Request, RequestEra};
use tessera_server::{McpServer, RequestFacts, Resolved};

use crate::body_limits::{Allowance, LARGE_BODY};
use crate::headers::{McpHeaders, check_method_and_name};
use crate::host::{host_allowed, origin_allowed};
use crate::reject::{self, status_for};
use crate::stream::{RequestLog, Running, Start};
use crate::{AuthDecision, EndpointOptions, Legacy, McpBody};

/// Serves an [`McpServer`] over Streamable HTTP, statelessly.
#[derive(Clone)]
pub struct McpEndpoint {
    pub(crate) server: Arc<McpServer>,
    options: Arc<EndpointOptions>,
    /// Body bytes being read now, across connections.
    pub(crate) bytes_in_flight: Arc<Allowance>,
    /// Large bodies being parsed and served now.
    large_bodies: Arc<Allowance>,
    /// Requests being served, for `notifications/cancelled`.
    pub(crate) in_flight: Arc<crate::in_flight::InFlight>,
    /// Initialize-era sessions' questions waiting for answers, and sessions ended.
    pub(crate) sessions: Arc<crate::legacy::Sessions>,
    /// Long-lived streams open, per client.
    pub(crate) listen_streams: Arc<crate::listen_streams::ListenStreams>,
}

/// A request ready to be served ([`McpEndpoint::prepare`]).
pub(crate) struct Prepared {
    server: Arc<McpServer>,
    registration: crate::in_flight::Registration,
    observed: tessera_server::telemetry::Observation,
}

impl Prepared {
    /// Serves `request` with `serve`, its notifications to `sink`: observed,
    /// and stopped by `notifications/cancelled` (answered `Cancelled` then).
    pub(crate) fn serve<S, F>(
        self,
        request: Request,
        facts: RequestFacts,
        resolved: Resolved,
        serve: S,
        sink: tessera_server::NotificationSink,
    ) -> impl std::future::Future<Output = tessera_server::Handled> + Send + 'static
    where
        S: FnOnce(Arc<McpServer>, Request, RequestFacts, Resolved) -> F + Send + 'static,
        F: std::future::Future<Output = tessera_server::Handled> + Send + 'static,
    {
        let Self {
            server,
            registration,
            observed,
        } = self;
        let id = request.id.clone();
        let facts = facts.with_notifications(sink);
        observed.run(async move {
            let served = registration.run(serve(server, request, facts, resolved));
            served.await.unwrap_or(tessera_server::Handled {
                id,
                result: Err(tessera_server::ServerError::Cancelled),
            })
        })
    }
}

impl McpEndpoint {
    /// An endpoint for `server` with `options`.
    pub fn new(server: Arc<McpServer>, options: EndpointOptions) -> Self {
        let sessions = Arc::new(crate::legacy::Sessions::new(
            options.answer_relay.as_ref(),
            options.session_notes.clone(),
            options.stream_log.clone(),
        ));
        Self {
            server,
            options: Arc::new(options),
            bytes_in_flight: Arc::default(),
            listen_streams: Arc::default(),
            large_bodies: Arc::default(),
            in_flight: Arc::default(),
            sessions,
        }
    }

    /// The options in force.
    pub fn options(&self) -> &EndpointOptions {
        &self.options
    }

    /// The checks that need only the request head: route, method, host,
    /// origin, content type and accept: `Some` is the refusal to send.
    pub fn check_head(&self, head: &Parts) -> Option<Response<McpBody>> {
        // RFC 9728: the metadata of a protected endpoint, for anyone to read.
        if head.method == Method::GET
            && let Some(metadata) = &self.options.protected_resource
            && self.options.is_resource_metadata_path(head.uri.path())
        {
            let mut r = reject::json(
                StatusCode::OK,
                serde_json::to_vec(metadata).unwrap_or_default(),
            );
            r.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            return Some(r);
        }
        if self
            .options
            .route
            .as_deref()
            .is_some_and(|route| head.uri.path() != route)
        {
            return Some(reject::plain(StatusCode::NOT_FOUND, "Not Found"));
        }
        if head.headers.get_all(header::HOST).iter().nth(1).is_some() {
            return Some(reject::error(
                StatusCode::BAD_REQUEST,
                None,
                TRANSPORT_ERROR,
                "Bad Request: more than one Host header",
                None,
            ));
        }
        // A Host header that is not text is refused, not replaced by the target's authority.
        let host = match head.headers.get(header::HOST) {
            Some(h) => h.to_str().unwrap_or("(not text)"),
            None => head.uri.authority().map_or("", |a| a.as_str()),
        };
        if !host_allowed(&self.options, host) {
            return Some(reject::error(
                StatusCode::FORBIDDEN,
                None,
                TRANSPORT_ERROR,
                format!("Forbidden: Host {host:?} is not allowed (DNS rebinding protection)"),
                None,
            ));
        }
        if let Some(origin) = head.headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(invalid)");
            if !origin_allowed(&self.options, origin) {
                return Some(reject::error(
                    StatusCode::FORBIDDEN,
                    None,
                    TRANSPORT_ERROR,
                    format!("Forbidden: Origin {origin:?} is not allowed"),
                    None,
                ));
            }
        }
        // Preflights are answered only for an allowed Host and Origin.
        if head.method == Method::OPTIONS && self.options.cors {
            return Some(self.preflight(head));
        }
        if head.method != Method::POST {
            if self.options.legacy == Legacy::Serve
                && (head.method == Method::GET || head.method == Method::DELETE)
            {
                // Session methods: the session decides (after authentication).
                return None;
            }
            return Some(reject::method_not_allowed());
        }
        let content_type = head
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Some(reject::error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                TRANSPORT_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
                None,
            ));
        }
        if !accepts_both(head) {
            return Some(reject::error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                TRANSPORT_ERROR,
                "Not Acceptable: the Accept header must list both application/json and text/event-stream",
                None,
            ));
        }
        None
    }

    /// Handles a whole request whose body is already in memory: the same
    /// ladder as [`respond`](McpEndpoint::respond).
    pub async fn handle(&self, head: Parts, body: Bytes) -> Response<McpBody> {
        let body = http_body_util::Full::new(body);
        self.respond(http::Request::from_parts(head, body)).await
    }

    /// Runs the authentication hook on the head (before any body is read):
    /// who is calling, or the 401 to send.
    pub(crate) async fn authenticate(&self, head: &Parts) -> Result<Caller, Response<McpBody>> {
        let peer = head
            .extensions
            .get::<crate::connections::ConnectionSlot>()
            .map(|slot| {
                // After a PROXY header, any X-Forwarded-For is the client's own.
                if slot.named_by_proxy_header() {
                    slot.peer()
                } else {
                    self.options
                        .trusted_proxies
                        .client_address(slot.peer(), &head.headers)
                }
            });
        let anonymous = Caller {
            peer,
            trace_context: trace_context(&head.headers).map(Box::new),
            tasks: head
                .extensions
                .get::<crate::RequestTaskRuntime>()
                .map(|runtime| Arc::clone(&runtime.0)),
            ..Caller::default()
        };
        let Some(auth) = &self.options.authenticate else {
            return Ok(anonymous);
        };
        match auth.authenticate(head).await {
            AuthDecision::Principal(p) => Ok(Caller {
                principal: Some(p),
                ..anonymous
            }),
            AuthDecision::Verified(info) => Ok(Caller {
                principal: Some(info.principal()),
                auth: Some(Arc::new(info)),
                ..anonymous
            }),
            AuthDecision::Anonymous => Ok(anonymous),
            AuthDecision::Reject(reason) => {
                let challenge = match self.options.resource_metadata_url() {
                    Some(url) => format!("Bearer resource_metadata=\"{url}\""),
                    None => "Bearer".to_owned(),
                };
                Err(unauthorized(&reason, &challenge))
            }
            AuthDecision::Challenge {
                reason,
                www_authenticate,
                headers,
            } => {
                let mut refusal = unauthorized(&reason, &www_authenticate);
                for (name, value) in headers {
                    refusal.headers_mut().append(name, value);
                }
                Err(refusal)
            }
        }
    }

    /// Handles the body of a request whose head passed the checks and authentication.
    pub(crate) async fn handle_body(
        &self,
        head: &Parts,
        caller: Caller,
        body: Bytes,
    ) -> Response<McpBody> {
        // Large bodies: a few at a time, and never more values than the limit.
        let _large = if body.len() >= LARGE_BODY {
            match self
                .large_bodies
                .reserve(1, self.options.large_bodies_at_once)
            {
                Some(slot) => Some(slot),
                None => {
                    return reject::unavailable(
                        "Service Unavailable: the server is reading as many large requests as it takes at once",
                        1,
                    );
                }
            }
        } else {
            None
        };
        let request = match intake::read(&body, &self.options.intake) {
            Ok(Message::Request(request)) => request,
            Ok(Message::Notification(n)) => {
                if let Some(id) = intake::cancelled_request(&n) {
                    // Only an authenticated caller is told apart from others:
                    // an anonymous one cancels by closing its response instead.
                    let facts = caller.facts(&self.options);
                    if let Some(principal) = facts.principal.as_deref()
                        && self.in_flight.cancel(Some(principal), &id)
                    {
                        tracing::info!(%id, "request cancelled by the client");
                    }
                }
                self.server.handle_notification(&n.method, n.params).await;
                return reject::empty(StatusCode::ACCEPTED);
            }
            Ok(Message::Response(response)) if self.options.legacy == Legacy::Serve => {
                let facts = caller.facts(&self.options);
                return self
                    .answer_question(head, facts.principal.as_deref(), response)
                    .await;
            }
            Ok(Message::Response(_)) => {
                return reject::error(
                    StatusCode::BAD_REQUEST,
                    None,
                    INVALID_REQUEST,
                    "Bad Request: JSON-RPC responses cannot be posted to this endpoint (servers send no requests)",
                    None,
                );
            }
            Err(refusal) => return reject::refusal(&refusal),
        };
        self.route_request(head, request, caller.facts(&self.options))
            .await
    }

    /// Steps 1 to 3: the era, the `_meta` envelope, the version header
    /// against the body, the version served.
    async fn route_request(
        &self,
        head: &Parts,
        mut request: Request,
        mut facts: RequestFacts,
    ) -> Response<McpBody> {
        let id = Some(request.id.clone());
        let headers = match McpHeaders::read(&head.headers) {
            Ok(headers) => headers,
            Err(m) => return reject::header_mismatch(id, &m.header, &m.body),
        };
        let header_version = headers.protocol_version;
        if let RequestEra::Legacy(version) = request.era(header_version) {
            if self.options.legacy == Legacy::Reject {
                // A body whose `_meta` names another version is a 2026-07-28
                // request with a header that disagrees, not an old client.
                if let (Some(h), Some(body)) = (header_version, request.protocol_version())
                    && h != body
                {
                    return version_mismatch(id, h, body);
                }
                return unsupported(id, version);
            }
            let resolved = self.server.resolve(&request, &facts);
            if let Some(refused) = self.check_mirrors(head, &headers, &request, &resolved, false) {
                return refused;
            }
            if self.options.legacy == Legacy::Serve {
                return self
                    .serve_session(head, request, facts, version, resolved)
                    .await;
            }
            facts.era = tessera_server::Era::Legacy {
                version: version.unwrap_or_else(|| crate::options::ASSUMED_LEGACY_VERSION.into()),
            };
            return self.dispatch(request, facts, resolved).await;
        }
        // 1. The `_meta` envelope (required keys) comes first.
        let body_version = match request.read_envelope() {
            Ok(meta) => meta.protocol_version.as_deref().unwrap_or(""),
            Err(e) => return reject::rpc_error(status_for(&e), id, e.to_error_object()),
        };
        // 2. Header and body versions must agree, and the header must be there.
        match header_version {
            None => {
                return reject::header_mismatch(
                    id,
                    "(missing)",
                    &format!(
                        "the body envelope names protocol version {body_version} but the required MCP-Protocol-Version header is absent"
                    ),
                );
            }
            Some(h) if h != body_version => return version_mismatch(id, h, body_version),
            Some(_) => {}
        }
        // 3. Version supported.
        if !STATELESS_PROTOCOL_VERSIONS.contains(&body_version) {
            return unsupported(id, Some(body_version.to_owned()));
        }
        self.mirrored_then_served(head, &headers, request, facts)
            .await
    }

    /// Step 4, `Mcp-Method` and `Mcp-Name` mirror the body; then step 5:
    /// method, capabilities and the rest are the server's.
    async fn mirrored_then_served(
        &self,
        head: &Parts,
        headers: &McpHeaders<'_>,
        request: Request,
        facts: RequestFacts,
    ) -> Response<McpBody> {
        let resolved = self.server.resolve(&request, &facts);
        if let Some(refused) = self.check_mirrors(head, headers, &request, &resolved, true) {
            return refused;
        }
        if request.method == SUBSCRIPTIONS_LISTEN && !self.options.listen {
            let refused = tessera_server::ServerError::Refused(tessera_protocol::ErrorObject::new(
                tessera_protocol::METHOD_NOT_FOUND,
                "subscriptions/listen is not served here: this deployment sends each response whole, so it cannot keep a stream open",
            ));
            let handled = tessera_server::Handled {
                id: request.id.clone(),
                result: Err(refused),
            };
            return crate::reject::json(http::StatusCode::OK, handled.to_bytes());
        }
        if request.method == SUBSCRIPTIONS_LISTEN {
            let counted = match self.listen_streams.open(
                head,
                facts.caller_key(),
                self.options.listen_streams_per_client,
            ) {
                Ok(counted) => counted,
                Err(refused) => return refused.response(Some(request.id.clone())),
            };
            return self
                .dispatch_with(
                    request,
                    facts,
                    resolved,
                    |server, request, facts, resolved| async move {
                        let _counted = counted;
                        server.serve_resolved(request, facts, resolved).await
                    },
                )
                .await;
        }
        self.dispatch(request, facts, resolved).await
    }

    /// The comment a long-lived event stream writes when it has been silent
    /// this long, and the runtime that times it.
    pub(crate) fn keep_alive(&self) -> Option<crate::stream::KeepAlive> {
        Some(crate::stream::KeepAlive {
            every: self.options.keep_alive?,
            runtime: Arc::clone(self.options.task_runtime.as_ref()?),
        })
    }

    /// The headers that mirror the body (`Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`) against it, and the name's characters: the refusal, if
    /// any. `required`: whether missing headers are refused too (2026-07-28);
    /// initialize-era requests have only the headers they sent compared.
    pub(crate) fn check_mirrors(
        &self,
        head: &Parts,
        headers: &McpHeaders<'_>,
        request: &Request,
        resolved: &Resolved,
        required: bool,
    ) -> Option<Response<McpBody>> {
        let id = Some(request.id.clone());
        if let Err(m) = check_method_and_name(headers, &request.method, request.target(), required)
        {
            return Some(reject::header_mismatch(id, &m.header, &m.body));
        }
        if let Err((header, problem)) =
            Self::check_param_headers(&head.headers, request, resolved, required)
        {
            return Some(reject::header_mismatch(id, &header, &problem));
        }
        // A name with control characters is refused before it reaches a log or a handler.
        if let Some(field) = tessera_protocol::name_param(&request.method)
            && request
                .target()
                .is_some_and(|t| t.chars().any(char::is_control))
        {
            let error = tessera_server::ServerError::invalid_params(format!(
                "Invalid {} request: params.{field} contains control characters",
                request.method
            ));
            return Some(reject::rpc_error(
                status_for(&error),
                id,
                error.to_error_object(),
            ));
        }
        None
    }

    /// "Any server that processes the message body MUST validate that encoded
    /// header values, after decoding if Base64-encoded, match the corresponding
    /// values in the request body": each `Mcp-Param-*` of the called tool.
    fn check_param_headers(
        headers: &http::HeaderMap,
        request: &Request,
        resolved: &Resolved,
        required: bool,
    ) -> Result<(), (String, String)> {
        // A tool hidden from this caller has no headers to check: it is unknown to them.
        let Some(tool) = resolved.tool() else {
            return Ok(());
        };
        let arguments = request.param("arguments").unwrap_or(&Value::Null);
        for param in tool.param_headers() {
            let name = param.header_name();
            let mut values = headers.get_all(name.as_str()).iter();
            let header = values.next();
            if values.next().is_some() {
                return Err((name.clone(), format!("{name} is sent more than once")));
            }
            if header.is_none() && !required {
                continue;
            }
            param
                .check(
                    header.map(http::HeaderValue::as_bytes),
                    param.value_in(arguments),
                )
                .map_err(|problem| (name, problem))?;
        }
        Ok(())
    }

    /// Serves `request`, [resolved](McpServer::resolve) already, with the server.
    pub(crate) async fn dispatch(
        &self,
        request: Request,
        facts: RequestFacts,
        resolved: Resolved,
    ) -> Response<McpBody> {
        self.dispatch_with(
            request,
            facts,
            resolved,
            |server, request, facts, resolved| async move {
                server.serve_resolved(request, facts, resolved).await
            },
        )
        .await
    }

    /// Serves `request` with `serve` (the server itself, or the era bridge in
    /// front of it) and frames what it says: JSON, or an event stream once it
    /// sends something before its answer.
    pub(crate) async fn dispatch_with<S, F>(
        &self,
        request: Request,
        facts: RequestFacts,
        resolved: Resolved,
        serve: S,
    ) -> Response<McpBody>
    where
        S: FnOnce(Arc<McpServer>, Request, RequestFacts, Resolved) -> F + Send + 'static,
        F: std::future::Future<Output = tessera_server::Handled> + Send + 'static,
    {
        let log = RequestLog::new(
            &request.method,
            request.target(),
            &request.id,
            self.options.access_log.as_ref(),
        );
        let legacy = facts.legacy_version().is_some();
        let prepared = self.prepare(&request, &facts, &resolved);
        let running = Running::new(move |sink| {
            Box::pin(prepared.serve(request, facts, resolved, serve, sink))
        });
        self.respond_running(running, log, legacy).await
    }

    /// What serving a request needs of the endpoint: its registration for
    /// `notifications/cancelled` and its observation (span, metrics).
    pub(crate) fn prepare(
        &self,
        request: &Request,
        facts: &RequestFacts,
        resolved: &Resolved,
    ) -> Prepared {
        Prepared {
            server: Arc::clone(&self.server),
            registration: self
                .in_flight
                .register(facts.principal.as_deref(), &request.id),
            observed: self.server.observe(request, facts, resolved),
        }
    }

    /// The response of a running request: its answer as JSON when it
    /// answered before saying anything, else its event stream.
    pub(crate) async fn respond_running(
        &self,
        running: Running,
        log: RequestLog,
        legacy: bool,
    ) -> Response<McpBody> {
        match running.start(log).await {
            Start::Answered(handled, mut log) => {
                // Initialize-era clients expect JSON-RPC errors in a 200 answer.
                let status = match (&handled.result, legacy) {
                    (Err(e), false) => status_for(e),
                    _ => StatusCode::OK,
                };
                log.finish(
                    status,
                    handled.outcome(),
                    handled
                        .result
                        .as_ref()
                        .err()
                        .map(tessera_server::ServerError::code),
                );
                let mut response = reject::json(status, handled.to_bytes());
                if let Err(e) = &handled.result {
                    reject::add_retry_after(e, &mut response);
                    if let tessera_server::ServerError::InsufficientScope { scope, .. } = e {
                        // RFC 6750 §3.1: the scope the client must step up to.
                        let mut challenge =
                            format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"");
                        if let Some(url) = self.options.resource_metadata_url() {
                            challenge.push_str(&format!(", resource_metadata=\"{url}\""));
                        }
                        if let Ok(value) = HeaderValue::from_str(&challenge) {
                            response
                                .headers_mut()
                                .insert(header::WWW_AUTHENTICATE, value);
                        }
                    }
                }
                response
            }
            Start::Streaming(stream) => stream.keeping_alive(self.keep_alive()).into_response(),
        }
    }

    fn preflight(&self, head: &Parts) -> Response<McpBody> {
        let mut r = reject::empty(StatusCode::NO_CONTENT);
        let h = r.headers_mut();
        let sessions = self.options.legacy == Legacy::Serve;
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(if sessions {
                "GET, POST, DELETE, OPTIONS"
            } else {
                "POST, OPTIONS"
            }),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(
                "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id",
            ),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        self.add_cors(head, &mut r);
        r
    }

    pub(crate) fn add_cors(&self, head: &Parts, response: &mut Response<McpBody>) {
        if !self.options.cors {
            return;
        }
        if let Some(origin) = head.headers.get(header::ORIGIN)
            && origin
                .to_str()
                .is_ok_and(|o| origin_allowed(&self.options, o))
        {
            let h = response.headers_mut();
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            h.insert(header::VARY, HeaderValue::from_static("Origin"));
            // A browser client must read the challenge to sign in, and its session id.
            let expose = match (
                h.contains_key(header::WWW_AUTHENTICATE),
                h.contains_key(crate::legacy::SESSION_HEADER),
            ) {
                (true, true) => Some("WWW-Authenticate, Mcp-Session-Id"),
                (true, false) => Some("WWW-Authenticate"),
                (false, true) => Some("Mcp-Session-Id"),
                (false, false) => None,
            };
            if let Some(expose) = expose {
                h.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    HeaderValue::from_static(expose),
                );
            }
        }
    }
}

/// Whether `Accept` covers both JSON and SSE (a missing header counts as `*/*`).
fn accepts_both(head: &Parts) -> bool {
    let Some(accept) = head
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
    else {
        return true;
    };
    let (mut json, mut sse) = (false, false);
    for range in accept.split(',') {
        let range = range.split(';').next().unwrap_or("").trim();
        let any = range == "*/*";
        json |= any
            || range.eq_ignore_ascii_case("application/json")
            || range.eq_ignore_ascii_case("application/*");
        sse |= any
            || range.eq_ignore_ascii_case("text/event-stream")
            || range.eq_ignore_ascii_case("text/*");
    }
    json && sse
}

/// 401 with a `WWW-Authenticate` challenge.
fn unauthorized(reason: &str, challenge: &str) -> Response<McpBody> {
    let mut r = reject::error(
        StatusCode::UNAUTHORIZED,
        None,
        TRANSPORT_ERROR,
        format!("Unauthorized: {reason}"),
        None,
    );
    if let Ok(value) = HeaderValue::from_str(challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    r
}

/// Who is calling, as authentication established it.
#[derive(Default)]
pub(crate) struct Caller {
    principal: Option<String>,
    auth: Option<Arc<tessera_server::AuthInfo>>,
    /// The address the request came from, when served by `serve`.
    peer: Option<std::net::IpAddr>,
    /// The `traceparent` and `tracestate` headers.
    trace_context: Option<Box<tessera_protocol::TraceContext>>,
    /// The request's own task runtime ([`RequestTaskRuntime`](crate::RequestTaskRuntime)).
    tasks: Option<Arc<dyn tessera_server::TaskRuntime>>,
}

/// The W3C trace context headers (the span's parent when the message's
/// `_meta` carries none); headers that are not text count as absent.
fn trace_context(headers: &http::HeaderMap) -> Option<tessera_protocol::TraceContext> {
    let text = |name: &str| {
        let value = headers.get(name)?.to_str().ok()?;
        Some(value.to_owned())
    };
    tessera_protocol::TraceContext::from_values(text("traceparent"), text("tracestate"))
}

impl Caller {
    /// The facts of a modern request from this caller, with its own task
    /// runtime or the endpoint's.
    pub(crate) fn facts(self, options: &EndpointOptions) -> RequestFacts {
        RequestFacts {
            era: tessera_server::Era::Modern,
            principal: self.principal,
            auth: self.auth,
            notifications: None,
            tasks: self.tasks.or_else(|| options.task_runtime.clone()),
            serves_initialize_era: options.legacy != Legacy::Reject,
            peer: self.peer,
            transport: Some(tessera_server::NetworkTransport::Tcp),
            trace_context: self.trace_context,
            session_id: None,
        }
    }
}

/// 400 with -32020: the `MCP-Protocol-Version` header and the body's `_meta` disagree.
fn version_mismatch(id: Option<RequestId>, header: &str, body: &str) -> Response<McpBody> {
    reject::header_mismatch(
        id,
        header,
        &format!(
            "the body envelope names protocol version {body} but the MCP-Protocol-Version header names {header}"
        ),
    )
}

/// 400 with -32022 naming the supported versions.
fn unsupported(id: Option<RequestId>, requested: Option<String>) -> Response<McpBody> {
    let error = tessera_server::ServerError::UnsupportedVersion { requested };
    reject::rpc_error(StatusCode::BAD_REQUEST, id, error.to_error_object())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(accept: Option<&str>) -> bool {
        let mut request = http::Request::post("/mcp");
        if let Some(a) = accept {
            request = request.header(header::ACCEPT, a);
        }
        accepts_both(&request.body(()).expect("request").into_parts().0)
    }

    #[test]
    fn accept_must_cover_json_and_event_streams() {
        for ok in [
            None,
            Some("application/json, text/event-stream"),
            Some("text/event-stream;q=0.9 , APPLICATION/JSON"),
            Some("application/*, text/*"),
            Some("*/*"),
        ] {
            assert!(accepting(ok), "{ok:?}");
        }
        for refused in [
            Some("application/json"),
            Some("text/event-stream"),
            Some("text/html, application/xml"),
            Some(""),
        ] {
            assert!(!accepting(refused), "{refused:?}");
        }
    }
}
