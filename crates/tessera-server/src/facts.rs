//! What the transport established about a request before dispatch.

use crate::NotificationSink;

/// Which protocol era the request belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Era {
    /// A 2026-07-28 request: per-request `_meta`, multi round-trip input.
    #[default]
    Modern,
    /// An initialize-era request (e.g. 2025-11-25), served statelessly in the old shapes.
    Legacy {
        /// The revision the client speaks.
        version: String,
    },
}

impl Era {
    /// Whether the request is initialize-era.
    pub fn is_legacy(&self) -> bool {
        matches!(self, Self::Legacy { .. })
    }
}

/// What a verified access token says about the caller (OAuth).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthInfo {
    /// The token's issuer (`iss`).
    pub issuer: String,
    /// The subject (`sub`).
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The OAuth client the token was issued to, if it says.
    pub client_id: Option<String>,
    /// The key the token is bound to, if it is (its `cnf.jkt`: the JWK
    /// SHA-256 thumbprint, RFC 9449 §6): such a token is accepted only with a
    /// DPoP proof of that key.
    pub bound_key: Option<String>,
}

impl AuthInfo {
    /// The principal tickets are bound to: issuer and subject together.
    pub fn principal(&self) -> String {
        format!("{} {}", self.issuer, self.subject)
    }

    /// Whether every scope in `needed` was granted.
    pub fn has_scopes(&self, needed: &[String]) -> bool {
        needed.iter().all(|n| self.scopes.iter().any(|s| s == n))
    }
}

/// Facts the transport supplies with each request.
#[derive(Clone, Default)]
pub struct RequestFacts {
    /// The era.
    pub era: Era,
    /// The authenticated principal, if any (bound into every ticket).
    pub principal: Option<String>,
    /// The verified access token's claims, when the server is protected with
    /// OAuth (shared: the facts are moved through every layer of a request,
    /// and middleware sees the same claims).
    pub auth: Option<std::sync::Arc<AuthInfo>>,
    /// Where progress and log notifications go; `None` drops them.
    pub notifications: Option<NotificationSink>,
    /// Where a call that goes on as a task runs; `None`: no tasks.
    pub tasks: Option<std::sync::Arc<dyn crate::TaskRuntime>>,
    /// Whether the transport also serves initialize-era clients, so that
    /// `server/discover` lists their revisions beside 2026-07-28.
    pub serves_initialize_era: bool,
    /// The address the request came from, when the transport knows it: what
    /// per-caller limits count anonymous callers by ([`RequestFacts::caller_key`]).
    pub peer: Option<std::net::IpAddr>,
    /// How the request reached the server (`network.transport` in traces and metrics).
    pub transport: Option<NetworkTransport>,
    /// W3C trace context the transport carried beside the message (HTTP's
    /// `traceparent` and `tracestate` headers): the span's parent when the
    /// message's own `_meta` has none.
    pub trace_context: Option<Box<tessera_protocol::TraceContext>>,
    /// The initialize-era session the request belongs to, as traces name it
    /// (`mcp.session.id`: a digest, never the session id itself).
    pub session_id: Option<String>,
}

/// The transport a request came over, as OpenTelemetry's `network.transport` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkTransport {
    /// Streamable HTTP (TCP).
    Tcp,
    /// Stdio (a pipe).
    Pipe,
}

impl NetworkTransport {
    /// `tcp` or `pipe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Pipe => "pipe",
        }
    }
}

/// Who a per-caller limit counts against: the principal when authenticated,
/// else the address the request came from — an IPv4 address as it is, an
/// IPv6 one by its /64 prefix, since one host is routinely given a whole
/// /64 and could otherwise be as many callers as it likes; `None` when
/// neither is known (such callers share one allowance).
///
/// ```
/// use tessera_server::caller_key;
/// let addr = "192.0.2.7".parse().ok();
/// assert_eq!(caller_key(Some("alice"), addr).as_deref(), Some("principal alice"));
/// assert_eq!(caller_key(None, addr).as_deref(), Some("address 192.0.2.7"));
/// let v6 = "2001:db8:1:2:aaaa::7".parse().ok();
/// assert_eq!(caller_key(None, v6).as_deref(), Some("address 2001:db8:1:2::/64"));
/// let mapped = "::ffff:192.0.2.7".parse().ok();
/// assert_eq!(caller_key(None, mapped).as_deref(), Some("address 192.0.2.7"));
/// assert_eq!(caller_key(None, None), None);
/// ```
pub fn caller_key(principal: Option<&str>, peer: Option<std::net::IpAddr>) -> Option<String> {
    use std::net::{IpAddr, Ipv6Addr};
    match (principal, peer.map(|addr| addr.to_canonical())) {
        (Some(p), _) => Some(format!("principal {p}")),
        (None, Some(IpAddr::V4(addr))) => Some(format!("address {addr}")),
        (None, Some(IpAddr::V6(addr))) => {
            let prefix = Ipv6Addr::from_bits(addr.to_bits() & !u128::from(u64::MAX));
            Some(format!("address {prefix}/64"))
        }
        (None, None) => None,
    }
}

impl RequestFacts {
    /// Facts of an unauthenticated modern request without a notification channel.
    pub fn modern() -> Self {
        Self::default()
    }

    /// The same facts, from a transport that also serves initialize-era clients.
    pub fn serving_initialize_era(mut self) -> Self {
        self.serves_initialize_era = true;
        self
    }

    /// Facts of an initialize-era request speaking `version`.
    pub fn legacy(version: impl Into<String>) -> Self {
        Self {
            era: Era::Legacy {
                version: version.into(),
            },
            ..Self::default()
        }
    }

    /// The same facts with `principal` set.
    pub fn with_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The same facts with a verified token: its issuer and subject become the principal.
    pub fn with_auth(mut self, auth: AuthInfo) -> Self {
        self.principal = Some(auth.principal());
        self.auth = Some(std::sync::Arc::new(auth));
        self
    }

    /// The same facts with a notification sink.
    pub fn with_notifications(mut self, sink: NotificationSink) -> Self {
        self.notifications = Some(sink);
        self
    }

    /// The same facts with a runtime for tasks.
    pub fn with_task_runtime(mut self, runtime: std::sync::Arc<dyn crate::TaskRuntime>) -> Self {
        self.tasks = Some(runtime);
        self
    }

    /// The same facts, from a request that came from `peer`.
    pub fn with_peer(mut self, peer: std::net::IpAddr) -> Self {
        self.peer = Some(peer);
        self
    }

    /// The same facts, from a request that came over `transport`.
    pub fn with_transport(mut self, transport: NetworkTransport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The same facts with trace context the transport carried beside the message.
    pub fn with_trace_context(mut self, context: tessera_protocol::TraceContext) -> Self {
        self.trace_context = Some(Box::new(context));
        self
    }

    /// The same facts, for a request of the initialize-era session `session_id`
    /// (its digest is what traces show).
    pub fn with_session(mut self, session_id: &str) -> Self {
        self.session_id = Some(tessera_state::digest_hex(session_id.as_bytes(), 16));
        self
    }

    /// Who this request's per-caller limits count against ([`caller_key`]).
    pub fn caller_key(&self) -> Option<String> {
        caller_key(self.principal.as_deref(), self.peer)
    }

    /// The legacy version, when the request is initialize-era.
    pub fn legacy_version(&self) -> Option<&str> {
        match &self.era {
            Era::Legacy { version } => Some(version),
            Era::Modern => None,
        }
    }
}

impl std::fmt::Debug for RequestFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestFacts")
            .field("era", &self.era)
            .field("principal", &self.principal)
            .field("auth", &self.auth)
            .field("notifications", &self.notifications.is_some())
            .field("tasks", &self.tasks.is_some())
            .field("serves_initialize_era", &self.serves_initialize_era)
            .field("peer", &self.peer)
            .field("transport", &self.transport)
            .field("trace_context", &self.trace_context)
            .field("session_id", &self.session_id)
            .finish()
    }
}
