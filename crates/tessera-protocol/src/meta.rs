//! `_meta` objects: per-request envelope, result and notification metadata.

use serde::{Deserialize, Serialize};

use crate::{ClientCapabilities, JsonObject, ProgressToken, RequestId};

/// `_meta` key naming the request's protocol version.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's self-description.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the client's capabilities for this request.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the log level the client wants for this request.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key carrying the server's self-description.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Notification/result `_meta` key naming a subscription.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key of a pushed initialize-era input request (Tessera's stdio era
/// bridge) naming the 2026-07-28 input-request key it answers, so a client can
/// tell its questions apart as it would by their `inputRequests` keys.
pub const INPUT_KEY_META_KEY: &str = "dev.tessera/inputKey";

/// The per-request `_meta` envelope of revision 2026-07-28.
///
/// `protocol_version` and `client_capabilities` are required on the wire; they
/// are optional here so that a server can name exactly which one is missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestMeta {
    /// The protocol version of this request.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client software making the request (self-reported).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// The client's capabilities for this request; `{}` means none.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// The log level the client opts in to; without it the server sends no log messages.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Token for out-of-band progress notifications.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// W3C trace context: `traceparent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// W3C trace context: `tracestate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// W3C baggage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
    /// Any other keys, kept as they came.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// Read key by key (a `flatten`ed `other` would buffer the whole object first).
impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = RequestMeta;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the _meta object of a request")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RequestMeta, A::Error> {
                fn once<T, E: serde::de::Error>(
                    slot: &mut Option<T>,
                    value: Option<T>,
                    key: &'static str,
                ) -> Result<(), E> {
                    if slot.is_some() {
                        return Err(E::duplicate_field(key));
                    }
                    *slot = value;
                    Ok(())
                }
                let mut meta = RequestMeta::default();
                while let Some(key) = map.next_key::<MetaKey>()? {
                    match key {
                        MetaKey::ProtocolVersion => once(
                            &mut meta.protocol_version,
                            map.next_value()?,
                            PROTOCOL_VERSION_KEY,
                        )?,
                        MetaKey::ClientInfo => {
                            once(&mut meta.client_info, map.next_value()?, CLIENT_INFO_KEY)?
                        }
                        MetaKey::ClientCapabilities => once(
                            &mut meta.client_capabilities,
                            map.next_value()?,
                            CLIENT_CAPABILITIES_KEY,
                        )?,
                        MetaKey::LogLevel => {
                            once(&mut meta.log_level, map.next_value()?, LOG_LEVEL_KEY)?
                        }
                        MetaKey::ProgressToken => {
                            once(&mut meta.progress_token, map.next_value()?, "progressToken")?
                        }
                        MetaKey::Traceparent => {
                            once(&mut meta.traceparent, map.next_value()?, "traceparent")?
                        }
                        MetaKey::Tracestate => {
                            once(&mut meta.tracestate, map.next_value()?, "tracestate")?
                        }
                        MetaKey::Baggage => once(&mut meta.baggage, map.next_value()?, "baggage")?,
                        MetaKey::Other(key) => {
                            meta.other.insert(key, map.next_value()?);
                        }
                    }
                }
                Ok(meta)
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A key of a request's `_meta`: one this crate reads (recognised without
/// allocating), or another, kept as it came.
enum MetaKey {
    ProtocolVersion,
    ClientInfo,
    ClientCapabilities,
    LogLevel,
    ProgressToken,
    Traceparent,
    Tracestate,
    Baggage,
    Other(String),
}

impl MetaKey {
    fn known(key: &str) -> Option<Self> {
        Some(match key {
            PROTOCOL_VERSION_KEY => Self::ProtocolVersion,
            CLIENT_INFO_KEY => Self::ClientInfo,
            CLIENT_CAPABILITIES_KEY => Self::ClientCapabilities,
            LOG_LEVEL_KEY => Self::LogLevel,
            "progressToken" => Self::ProgressToken,
            "traceparent" => Self::Traceparent,
            "tracestate" => Self::Tracestate,
            "baggage" => Self::Baggage,
            _ => return None,
        })
    }
}

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = MetaKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a _meta key")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MetaKey, E> {
                Ok(MetaKey::known(v).unwrap_or_else(|| MetaKey::Other(v.to_owned())))
            }

            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<MetaKey, E> {
                Ok(MetaKey::known(&v).unwrap_or(MetaKey::Other(v)))
            }
        }
        d.deserialize_str(Name)
    }
}

impl RequestMeta {
    /// The envelope a 2026-07-28 client sends: version, client info and capabilities.
    pub fn new(client_info: Implementation, client_capabilities: ClientCapabilities) -> Self {
        Self {
            protocol_version: Some(crate::LATEST_PROTOCOL_VERSION.to_owned()),
            client_info: Some(client_info),
            client_capabilities: Some(client_capabilities),
            ..Self::default()
        }
    }
}

/// `_meta` of a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMeta {
    /// The server software producing the response.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Any other keys, kept as they came.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `_meta` of a notification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// The subscription this notification belongs to, if any.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Any other keys, kept as they came.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// Name and version of an MCP implementation (client or server).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What this implementation does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for a user interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website of this implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

/// An icon a client may display.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the icon (https or data:).
    pub src: String,
    /// MIME type, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes, e.g. `["48x48"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`: an `https:` URL or a `data:` URI.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            ..Self::default()
        }
    }

    /// Its MIME type, e.g. `image/png`.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// One size it comes in, e.g. `48x48` (or `any` for scalable images).
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.get_or_insert_with(Vec::new).push(size.into());
        self
    }

    /// The theme it is drawn for: `light` or `dark`.
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }
}

/// Severity of a log message (RFC 5424 levels), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level messages.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant conditions.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// System is unusable.
    Emergency,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_meta_reads_text_and_refuses_repeated_or_mistyped_keys() {
        let meta: RequestMeta = serde_json::from_str(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":null,"x/y":[1]}"#,
        )
        .unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(meta.traceparent, None);
        assert_eq!(meta.other["x/y"], json!([1]));
        let repeated = serde_json::from_str::<RequestMeta>(
            r#"{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}"#,
        )
        .unwrap_err();
        assert!(
            repeated.to_string().contains("duplicate field"),
            "{repeated}"
        );
        let mistyped = serde_json::from_value::<RequestMeta>(
            json!({"io.modelcontextprotocol/clientCapabilities": "all"}),
        )
        .unwrap_err();
        assert!(mistyped.to_string().contains("invalid type"), "{mistyped}");
        assert!(serde_json::from_value::<RequestMeta>(json!([])).is_err());
    }

    #[test]
    fn request_meta_keeps_unknown_keys_and_reads_known_ones() {
        let raw = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/logLevel": "info",
            "progressToken": 7,
            "traceparent": "00-abc-def-01",
            "com.example/x": 1
        });
        let meta: RequestMeta = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(meta.log_level, Some(LoggingLevel::Info));
        assert_eq!(meta.progress_token, Some(RequestId::from(7)));
        assert_eq!(meta.other.get("com.example/x"), Some(&json!(1)));
        assert_eq!(serde_json::to_value(&meta).unwrap(), raw);
    }

    #[test]
    fn log_levels_order_by_severity() {
        assert!(LoggingLevel::Debug < LoggingLevel::Error);
        assert!(LoggingLevel::Emergency > LoggingLevel::Alert);
    }
}
