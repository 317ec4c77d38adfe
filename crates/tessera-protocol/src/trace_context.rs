//! W3C trace context carried with a message: what the OpenTelemetry
//! conventions for MCP put in `params._meta` (`traceparent`, `tracestate`),
//! and what HTTP carries in headers of the same names.

use serde_json::{Map, Value};

/// A `traceparent` and its optional `tracestate`, as they travel (not parsed:
/// the receiving side's propagator reads them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`: `00-{trace id}-{parent id}-{flags}`.
    pub traceparent: String,
    /// `tracestate`: vendor entries, when there are any.
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The context in the environment: `TRACEPARENT` and `TRACESTATE`, the
    /// OpenTelemetry convention for passing a trace to a child process. `None`
    /// when `TRACEPARENT` is unset or empty.
    pub fn from_env() -> Option<Self> {
        Self::from_values(
            std::env::var("TRACEPARENT").ok(),
            std::env::var("TRACESTATE").ok(),
        )
    }

    /// A context from the two values (blank ones count as absent).
    pub fn from_values(traceparent: Option<String>, tracestate: Option<String>) -> Option<Self> {
        let traceparent = traceparent.filter(|t| !t.trim().is_empty())?;
        Some(Self {
            traceparent: traceparent.trim().to_owned(),
            tracestate: tracestate
                .filter(|t| !t.trim().is_empty())
                .map(|t| t.trim().to_owned()),
        })
    }

    /// Puts the context into a request's `_meta`, replacing what was there.
    ///
    /// ```
    /// let cx = tessera_protocol::TraceContext::from_values(
    ///     Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
    ///     None,
    /// ).unwrap();
    /// let mut meta = serde_json::Map::new();
    /// cx.insert_into(&mut meta);
    /// assert_eq!(meta["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    /// assert!(!meta.contains_key("tracestate"));
    /// ```
    pub fn insert_into(&self, meta: &mut Map<String, Value>) {
        meta.insert(
            "traceparent".into(),
            Value::String(self.traceparent.clone()),
        );
        match &self.tracestate {
            Some(state) => {
                meta.insert("tracestate".into(), Value::String(state.clone()));
            }
            None => {
                meta.remove("tracestate");
            }
        }
    }
}
