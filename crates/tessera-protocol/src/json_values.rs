//! Counting the values of a JSON text without building them: what a body
//! would cost as a tree, known before it is one.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// How many JSON values `body` holds (every object, array, string, number,
/// boolean and null, at any depth), counted without building them; `None`
/// when it is not JSON (the parser that follows names the problem).
///
/// serde_json's recursion limit (128 levels) bounds the depth on the way.
///
/// ```
/// assert_eq!(tessera_protocol::count_json_values(br#"{"a":[1,2,{"b":null}],"c":"x"}"#), Some(7));
/// ```
pub fn count_json_values(body: &[u8]) -> Option<usize> {
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_any(Counter).ok()
}

struct Counter;

impl<'de> de::DeserializeSeed<'de> for Counter {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counter {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut n = 1;
        while map.next_key::<IgnoredAny>()?.is_some() {
            n += map.next_value_seed(Counter)?;
        }
        Ok(n)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 1;
        while let Some(inner) = seq.next_element_seed(Counter)? {
            n += inner;
        }
        Ok(n)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<usize, E> {
        Ok(1)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<usize, E> {
        Ok(1)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<usize, E> {
        Ok(1)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<usize, E> {
        Ok(1)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<usize, E> {
        Ok(1)
    }

    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_at_every_depth() {
        assert_eq!(
            count_json_values(br#"{"a":[1,2,{"b":null}],"c":"x"}"#),
            Some(7)
        );
        assert_eq!(count_json_values(b"0"), Some(1));
        assert_eq!(count_json_values(b"{"), None);
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(
            count_json_values(deep.as_bytes()),
            None,
            "past the recursion limit"
        );
    }
}
