//! The one pass over a message's bytes: syntax, the value budget, duplicate
//! members of the envelope and of `params`, and the frame's members, read
//! together as the tree is built.
//!
//! Written with serde's visitor traits over `serde_json`'s parser rather than
//! parsing to a `Value` and then walking it: every extra walk was a measured
//! share of a request's cost, and the budget stops a body of many small
//! values before it is built, not after.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use tessera_protocol::{JsonObject, RequestMeta};

/// How many more values may be built; set when the limit was passed.
pub(super) struct ValuesLeft {
    left: Cell<usize>,
    exceeded: Cell<bool>,
}

impl ValuesLeft {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            left: Cell::new(limit),
            exceeded: Cell::new(false),
        }
    }

    pub(super) fn exceeded(&self) -> bool {
        self.exceeded.get()
    }

    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exceeded.set(true);
                Err(E::custom("the message holds too many JSON values"))
            }
        }
    }
}

/// The members of a message, as read; what they mean is decided after.
#[derive(Default)]
pub(super) struct Frame {
    /// Whether the text is an array (a batch), or not an object at all.
    pub(super) shape: Shape,
    pub(super) jsonrpc: Option<Value>,
    pub(super) id: Option<Value>,
    pub(super) method: Option<Value>,
    pub(super) params: Option<FrameParams>,
    pub(super) result: Option<Value>,
    pub(super) error: Option<Value>,
    /// The first member of the message named twice.
    pub(super) duplicate: Option<String>,
}

/// What the text's top level is.
#[derive(Default, PartialEq, Eq)]
pub(super) enum Shape {
    #[default]
    Object,
    Array,
    Other,
}

/// `params._meta` as read: typed in the pass, or as JSON when that failed
/// or the body was too large to read uncounted.
#[derive(Debug)]
pub(crate) enum SentMeta {
    Typed(Box<RequestMeta>),
    Value(Value),
}

impl SentMeta {
    /// As JSON again.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Typed(meta) => serde_json::to_value(meta).unwrap_or(Value::Null),
            Self::Value(value) => value,
        }
    }
}

/// How `_meta` is read: typed straight from the bytes (bodies too small to
/// pass the value budget), or counted as JSON (everything else, and a retry
/// when the typed reading failed, which then names the problem precisely).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MetaReading {
    Typed,
    Counted,
}

/// The pass's settings and what it noticed.
pub(super) struct Pass<'b> {
    pub(super) budget: &'b ValuesLeft,
    pub(super) meta: MetaReading,
    /// Set while `_meta` is read typed: an error then is the typed reading's.
    pub(super) in_typed_meta: Cell<bool>,
}

/// `params`: its `_meta` apart, the other members, the first one named twice.
pub(super) enum FrameParams {
    Object {
        meta: Option<SentMeta>,
        rest: JsonObject,
        duplicate: Option<String>,
    },
    /// `params` that is not an object.
    Other,
}

/// Reads `bytes` in one pass.
///
/// JSON text is UTF-8 (RFC 8259 §8.1): a body that is valid UTF-8 as a
/// whole is read as a `str`, so its strings are not checked again one by
/// one (about 70 instructions each); any other body is read as bytes, which
/// names where the text stops being UTF-8.
pub(super) fn read_frame(bytes: &[u8], pass: &Pass<'_>) -> Result<Frame, serde_json::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => read_from(serde_json::de::StrRead::new(text), pass),
        Err(_) => read_from(serde_json::de::SliceRead::new(bytes), pass),
    }
}

fn read_from<'de, R: serde_json::de::Read<'de>>(
    read: R,
    pass: &Pass<'_>,
) -> Result<Frame, serde_json::Error> {
    let mut de = serde_json::Deserializer::new(read);
    let frame = de.deserialize_any(FrameVisitor(pass))?;
    de.end()?;
    Ok(frame)
}

struct FrameVisitor<'p, 'b>(&'p Pass<'b>);

/// The members of a message that mean something.
enum FrameKey {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other(String),
}

impl FrameKey {
    fn name(self) -> String {
        match self {
            Self::Jsonrpc => "jsonrpc".into(),
            Self::Id => "id".into(),
            Self::Method => "method".into(),
            Self::Params => "params".into(),
            Self::Result => "result".into(),
            Self::Error => "error".into(),
            Self::Other(name) => name,
        }
    }
}

impl<'de> serde::Deserialize<'de> for FrameKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = FrameKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<FrameKey, E> {
                Ok(match v {
                    "jsonrpc" => FrameKey::Jsonrpc,
                    "id" => FrameKey::Id,
                    "method" => FrameKey::Method,
                    "params" => FrameKey::Params,
                    "result" => FrameKey::Result,
                    "error" => FrameKey::Error,
                    other => FrameKey::Other(other.to_owned()),
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

impl<'de> Visitor<'de> for FrameVisitor<'_, '_> {
    type Value = Frame;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Frame, A::Error> {
        let budget = self.0.budget;
        budget.take()?;
        let mut frame = Frame::default();
        // Members of no meaning, kept by name only to find one named twice.
        let mut others: std::collections::HashSet<String> = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<FrameKey>()? {
            if let FrameKey::Other(name) = key {
                // Unknown members are read (and counted) but not kept.
                map.next_value_seed(Counted(budget))?;
                if others.contains(&name) {
                    frame.duplicate.get_or_insert(name);
                } else {
                    others.insert(name);
                }
                continue;
            }
            let slot = match &key {
                FrameKey::Jsonrpc => &mut frame.jsonrpc,
                FrameKey::Id => &mut frame.id,
                FrameKey::Method => &mut frame.method,
                FrameKey::Result => &mut frame.result,
                FrameKey::Error => &mut frame.error,
                FrameKey::Params => {
                    let params = map.next_value_seed(ParamsSeed(self.0))?;
                    if frame.params.is_some() {
                        frame.duplicate.get_or_insert(key.name());
                    } else {
                        frame.params = Some(params);
                    }
                    continue;
                }
                FrameKey::Other(_) => continue,
            };
            let value = map.next_value_seed(Counted(budget))?;
            if slot.is_some() {
                frame.duplicate.get_or_insert(key.name());
            } else {
                *slot = Some(value);
            }
        }
        Ok(frame)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Frame, A::Error> {
        self.0.budget.take()?;
        while seq.next_element_seed(Counted(self.0.budget))?.is_some() {}
        Ok(Frame {
            shape: Shape::Array,
            ..Frame::default()
        })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Frame, E> {
        self.other()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Frame, E> {
        self.other()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Frame, E> {
        self.other()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Frame, E> {
        self.other()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Frame, E> {
        self.other()
    }
    fn visit_unit<E: de::Error>(self) -> Result<Frame, E> {
        self.other()
    }
}

impl FrameVisitor<'_, '_> {
    fn other<E: de::Error>(self) -> Result<Frame, E> {
        self.0.budget.take()?;
        Ok(Frame {
            shape: Shape::Other,
            ..Frame::default()
        })
    }
}

/// `params`, split into `_meta` and the rest.
struct ParamsSeed<'p, 'b>(&'p Pass<'b>);

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_, '_> {
    type Value = FrameParams;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FrameParams, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'_, '_> {
    type Value = FrameParams;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the params of a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FrameParams, A::Error> {
        let pass = self.0;
        pass.budget.take()?;
        let (mut meta, mut rest, mut duplicate) = (None, JsonObject::new(), None);
        while let Some(key) = map.next_key::<String>()? {
            if key == "_meta" {
                let read = match pass.meta {
                    MetaReading::Typed => {
                        pass.in_typed_meta.set(true);
                        let typed = map.next_value::<RequestMeta>()?;
                        pass.in_typed_meta.set(false);
                        SentMeta::Typed(Box::new(typed))
                    }
                    MetaReading::Counted => {
                        SentMeta::Value(map.next_value_seed(Counted(pass.budget))?)
                    }
                };
                if meta.is_some() {
                    duplicate.get_or_insert(key);
                } else {
                    meta = Some(read);
                }
                continue;
            }
            let value = map.next_value_seed(Counted(pass.budget))?;
            if rest.contains_key(&key) {
                duplicate.get_or_insert(key);
            } else {
                rest.insert(key, value);
            }
        }
        Ok(FrameParams::Object {
            meta,
            rest,
            duplicate,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<FrameParams, A::Error> {
        Counted(self.0.budget)
            .visit_seq(seq)
            .map(|_| FrameParams::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<FrameParams, E> {
        self.0.budget.take().map(|()| FrameParams::Other)
    }
}

/// A JSON value built while its values are counted against the budget.
/// (Nested members named twice keep the last, as JSON parsers do; only the
/// envelope's and `params`' own members are refused when repeated.)
#[derive(Clone, Copy)]
struct Counted<'b>(&'b ValuesLeft);

impl<'de> DeserializeSeed<'de> for Counted<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counted<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.take()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.take()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.0.take()?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.take()?;
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, limit: usize) -> (Result<Frame, serde_json::Error>, bool) {
        let budget = ValuesLeft::new(limit);
        let pass = Pass {
            budget: &budget,
            meta: MetaReading::Counted,
            in_typed_meta: Cell::new(false),
        };
        let frame = read_frame(text.as_bytes(), &pass);
        (frame, budget.exceeded())
    }

    #[test]
    fn values_are_counted_at_every_depth() {
        // 1 message + "a" (array + 3: 1, 2, {b: null} = 2) + "c" = 8 values.
        let text = r#"{"a":[1,2,{"b":null}],"c":"x"}"#;
        assert!(read(text, 7).0.is_ok());
        let (frame, exceeded) = read(text, 6);
        assert!(frame.is_err() && exceeded);
    }

    #[test]
    fn the_envelope_and_params_are_split_and_duplicates_noted() {
        let (frame, _) = read(
            r#"{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"m","params":{"_meta":{},"a":{"x":1,"x":2},"b":1,"b":2}}"#,
            100,
        );
        let frame = frame.unwrap();
        assert_eq!(frame.duplicate.as_deref(), Some("id"));
        assert_eq!(frame.id, Some(Value::from(1)));
        let Some(FrameParams::Object {
            meta,
            rest,
            duplicate,
        }) = frame.params
        else {
            panic!("params is an object");
        };
        assert!(meta.is_some());
        assert_eq!(duplicate.as_deref(), Some("b"));
        // Nested members named twice keep the last.
        assert_eq!(rest["a"]["x"], 2);
    }

    #[test]
    fn nesting_past_the_parser_limit_is_a_syntax_error() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        let (frame, exceeded) = read(&deep, 100_000);
        assert!(frame.is_err() && !exceeded);
    }

    #[test]
    fn trailing_bytes_are_refused() {
        assert!(read(r#"{"id":1} {"id":2}"#, 100).0.is_err());
    }
}
