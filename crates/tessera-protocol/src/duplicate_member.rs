//! Duplicate members in a JSON-RPC request: JSON parsers keep the last one
//! silently, so `{"name":"a","name":"b"}` could mean one thing to a check and
//! another to a handler. Requests that have them are refused.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A member named twice, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DuplicateMember {
    /// In the request object itself (`jsonrpc`, `id`, `method`, `params`, ...).
    Envelope(String),
    /// In `params`.
    Params(String),
}

/// The first member named twice in the request object or its `params`, when
/// `body` is JSON; `None` for bodies without one (or that are not JSON: the
/// parser that follows reports those).
///
/// ```
/// use tessera_protocol::{DuplicateMember, first_duplicate_member};
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#;
/// assert_eq!(first_duplicate_member(body), Some(DuplicateMember::Params("name".into())));
/// assert_eq!(first_duplicate_member(br#"{"id":1,"id":2}"#), Some(DuplicateMember::Envelope("id".into())));
/// assert_eq!(first_duplicate_member(br#"{"id":1,"params":{"a":{"x":1,"x":2}}}"#), None);
/// ```
pub fn first_duplicate_member(body: &[u8]) -> Option<DuplicateMember> {
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_any(Level::Envelope).ok().flatten()
}

/// Which object is being read.
#[derive(Clone, Copy)]
enum Level {
    Envelope,
    Params,
}

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Option<DuplicateMember>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = Option<DuplicateMember>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        let mut found = None;
        // Every member is read, so the parser sees the object end where it should.
        while let Some(key) = map.next_key::<String>()? {
            if found.is_none() && !seen.insert(key.clone()) {
                found = Some(match self {
                    Level::Envelope => DuplicateMember::Envelope(key),
                    Level::Params => DuplicateMember::Params(key),
                });
                map.next_value::<IgnoredAny>()?;
            } else if matches!(self, Level::Envelope) && key == "params" {
                let inner = map.next_value_seed(Level::Params)?;
                found = found.or(inner);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found_where_they_matter() {
        let cases: [(&str, Option<DuplicateMember>); 8] = [
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#, None),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
                Some(DuplicateMember::Envelope("method".into())),
            ),
            (
                r#"{"params":{"requestState":"a","requestState":"b"},"id":1}"#,
                Some(DuplicateMember::Params("requestState".into())),
            ),
            (
                r#"{"params":{"_meta":{},"_meta":{}}}"#,
                Some(DuplicateMember::Params("_meta".into())),
            ),
            // An escaped spelling of the same key is the same key.
            (
                r#"{"id":1,"\u0069d":2}"#,
                Some(DuplicateMember::Envelope("id".into())),
            ),
            // Deeper objects are the handler's (arguments are checked by their type).
            (r#"{"params":{"arguments":{"a":1,"a":2}}}"#, None),
            (r#"[{"id":1,"id":1}]"#, None),
            (r#"{"id":1,"id":"#, None),
        ];
        for (body, expected) in cases {
            assert_eq!(first_duplicate_member(body.as_bytes()), expected, "{body}");
        }
    }
}
