//! Canonical JSON: the one byte string a JSON value is digested as.
//!
//! Rules: object keys sorted recursively by their UTF-8 bytes; no whitespace;
//! strings escaped exactly as `serde_json` escapes them (`\"`, `\\`, `\b`,
//! `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`, everything
//! else verbatim UTF-8); numbers as `serde_json` prints them. The output is
//! therefore what `serde_json::to_string` prints for the same value once its
//! maps are sorted — whatever `serde_json` features (such as
//! `preserve_order`) are enabled elsewhere in the build.
//!
//! The writer walks the value with an explicit stack, so a deeply nested
//! value cannot overflow the call stack here.

use std::fmt;

use serde_json::Value;

/// Where canonical bytes go: a buffer, or straight into a hash.
pub(crate) trait Sink {
    /// Appends bytes.
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for crate::sha256::Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

/// The canonical JSON text of `value` (see the module docs for the rules).
///
/// ```
/// use serde_json::json;
/// use tessera_state::canonical_json;
/// assert_eq!(
///     canonical_json(&json!({"b": [1, 2.5, null], "a": {"y": "\n", "x": true}})),
///     r#"{"a":{"x":true,"y":"\n"},"b":[1,2.5,null]}"#,
/// );
/// ```
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // Only whole UTF-8 sequences and ASCII are ever written, so this cannot
    // fail; the lossy conversion keeps the function free of a panic path.
    match String::from_utf8(out) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

/// One pending piece of output.
enum Step<'a> {
    Value(&'a Value),
    Key(&'a str),
    Raw(&'static [u8]),
}

/// Writes the canonical JSON of `value` into `sink`.
pub(crate) fn write_canonical(value: &Value, sink: &mut impl Sink) {
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Raw(bytes) => sink.put(bytes),
            Step::Key(key) => {
                write_string(key, sink);
                sink.put(b":");
            }
            Step::Value(value) => match value {
                Value::Null => sink.put(b"null"),
                Value::Bool(true) => sink.put(b"true"),
                Value::Bool(false) => sink.put(b"false"),
                Value::Number(number) => write_display(number, sink),
                Value::String(text) => write_string(text, sink),
                Value::Array(items) => {
                    sink.put(b"[");
                    stack.push(Step::Raw(b"]"));
                    for (index, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if index > 0 {
                            stack.push(Step::Raw(b","));
                        }
                    }
                }
                Value::Object(map) => {
                    sink.put(b"{");
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    stack.push(Step::Raw(b"}"));
                    for (index, (key, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(key));
                        if index > 0 {
                            stack.push(Step::Raw(b","));
                        }
                    }
                }
            },
        }
    }
}

/// Writes a JSON string literal, escaped as `serde_json` does.
fn write_string(text: &str, sink: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    sink.put(b"\"");
    let bytes = text.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let short: Option<&'static [u8]> = match byte {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x00..=0x1f => None,
            _ => continue,
        };
        if let Some(run) = bytes.get(start..index) {
            sink.put(run);
        }
        match short {
            Some(escape) => sink.put(escape),
            None => {
                let hi = HEX[usize::from(byte >> 4)];
                let lo = HEX[usize::from(byte & 0x0f)];
                sink.put(&[b'\\', b'u', b'0', b'0', hi, lo]);
            }
        }
        start = index + 1;
    }
    if let Some(run) = bytes.get(start..) {
        sink.put(run);
    }
    sink.put(b"\"");
}

/// Writes a `Display` value (numbers) into the sink without allocating.
fn write_display(value: &impl fmt::Display, sink: &mut impl Sink) {
    struct Adapter<'s, S: Sink>(&'s mut S);
    impl<S: Sink> fmt::Write for Adapter<'_, S> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.put(s.as_bytes());
            Ok(())
        }
    }
    // The adapter never fails, and `Number`'s Display never fails.
    let _ = fmt::write(&mut Adapter(sink), format_args!("{value}"));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_recursively_and_whitespace_dropped() {
        let value: Value = serde_json::from_str(
            r#" { "b" : 2, "a" : { "z" : [ { "y" : 1, "x" : 0 } ], "c" : null } } "#,
        )
        .expect("json");
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"c":null,"z":[{"x":0,"y":1}]},"b":2}"#
        );
    }

    #[test]
    fn key_order_does_not_matter() {
        let one: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).expect("json");
        let two: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).expect("json");
        assert_eq!(canonical_json(&one), canonical_json(&two));
        let one: Value =
            serde_json::from_str(r#"{"o":{"p":[{"q":1,"r":2}],"s":3},"t":4}"#).expect("json");
        let two: Value =
            serde_json::from_str(r#"{"t":4,"o":{"s":3,"p":[{"r":2,"q":1}]}}"#).expect("json");
        assert_eq!(canonical_json(&one), canonical_json(&two));
    }

    #[test]
    fn array_order_matters() {
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
    }

    #[test]
    fn keys_sort_by_utf8_bytes() {
        let value = json!({"é": 1, "z": 2, "Z": 3, "": 4, "aa": 5, "a": 6});
        assert_eq!(
            canonical_json(&value),
            r#"{"":4,"Z":3,"a":6,"aa":5,"z":2,"é":1}"#
        );
    }

    #[test]
    fn strings_are_escaped_like_serde_json() {
        let text: String = (0u8..0x80).map(char::from).collect::<String>() + "é€😀\u{2028}";
        let value = Value::String(text);
        assert_eq!(
            canonical_json(&value),
            serde_json::to_string(&value).expect("json")
        );
    }

    #[test]
    fn numbers_print_like_serde_json() {
        for value in [
            json!(0),
            json!(-1),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(1.0e-7),
            json!(100000000000000000000.0),
            json!(0.1),
        ] {
            assert_eq!(
                canonical_json(&value),
                serde_json::to_string(&value).expect("json")
            );
        }
    }

    #[test]
    fn scalars_and_empty_containers() {
        assert_eq!(canonical_json(&json!(null)), "null");
        assert_eq!(canonical_json(&json!(true)), "true");
        assert_eq!(canonical_json(&json!(false)), "false");
        assert_eq!(canonical_json(&json!({})), "{}");
        assert_eq!(canonical_json(&json!([])), "[]");
        assert_eq!(canonical_json(&json!([[], {}, [{}]])), "[[],{},[{}]]");
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let mut value = json!(1);
        for _ in 0..100_000 {
            value = Value::Array(vec![value]);
        }
        let text = canonical_json(&value);
        assert_eq!(text.len(), 200_001);
        // Dropping a deeply nested Value recurses inside serde_json; unwrap it
        // iteratively so the test itself does not overflow.
        let mut current = value;
        while let Value::Array(mut items) = current {
            current = items.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn sink_into_hash_equals_hash_of_text() {
        let value = json!({"b": [1, "x"], "a": {"d": 1.25, "c": false}});
        use sha2::Digest as _;
        let mut hasher = crate::sha256::Sha256::new();
        write_canonical(&value, &mut hasher);
        let streamed = hasher.finalize();
        let direct: [u8; 32] = sha2::Sha256::digest(canonical_json(&value).as_bytes()).into();
        assert_eq!(streamed, direct);
    }
}
