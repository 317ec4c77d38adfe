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

/// Facts the transport supplies with each request.
#[derive(Clone, Default)]
pub struct RequestFacts {
    /// The era.
    pub era: Era,
    /// The authenticated principal, if any.
    pub principal: Option<String>,
    /// Where progress and log notifications go; `None` drops them.
    pub notifications: Option<NotificationSink>,
}

impl RequestFacts {
    /// Facts of an unauthenticated modern request without a notification channel.
    pub fn modern() -> Self {
        Self::default()
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

    /// The same facts with a notification sink.
    pub fn with_notifications(mut self, sink: NotificationSink) -> Self {
        self.notifications = Some(sink);
        self
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
            .field("notifications", &self.notifications.is_some())
            .finish()
    }
}
