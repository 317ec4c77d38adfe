//! Property tests: random payloads round-trip; random corruptions never open and never panic.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tessera_state::{
    ArgumentsDigest, Binding, KeyRing, RequestStateCodec, SealMode, StateKey, canonical_json,
};

const NOW: u64 = 1_767_225_600;

fn codec(mode: SealMode) -> RequestStateCodec {
    let ring = KeyRing::new(
        "pk",
        StateKey::from_secret_str("property test secret of sufficient length").expect("key"),
    )
    .expect("ring");
    RequestStateCodec::builder(ring)
        .mode(mode)
        .build()
        .expect("codec")
}

fn binding() -> Binding {
    Binding::new("tools/call", "t", &json!({"a": [1, 2]}), Some("p"), "aud")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Unit,
    Text(String),
    Pair(i64, bool),
    Record {
        id: u64,
        tags: Vec<String>,
        scores: BTreeMap<String, i32>,
        maybe: Option<Box<Shape>>,
    },
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        Just(Shape::Unit),
        any::<String>().prop_map(Shape::Text),
        (any::<i64>(), any::<bool>()).prop_map(|(n, b)| Shape::Pair(n, b)),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        (
            any::<u64>(),
            prop::collection::vec(any::<String>(), 0..4),
            prop::collection::btree_map(any::<String>(), any::<i32>(), 0..4),
            prop::option::of(inner),
        )
            .prop_map(|(id, tags, scores, maybe)| Shape::Record {
                id,
                tags,
                scores,
                maybe: maybe.map(Box::new),
            })
    })
}

/// Arbitrary JSON values (finite floats only: JSON has no NaN or infinity).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite and exactly re-parsed", |f| {
                // serde_json's default float parser is not always correctly rounded.
                f.is_finite()
                    && serde_json::to_string(f)
                        .ok()
                        .and_then(|text| serde_json::from_str::<f64>(&text).ok())
                        == Some(*f)
            })
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Rebuilds `value` with every object's keys inserted in reverse order.
fn reversed_keys(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(reversed_keys).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| b.0.cmp(a.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), reversed_keys(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// Rebuilds `value` with every object's keys inserted in sorted order.
fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted_keys(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

#[derive(Debug, Clone)]
enum Corruption {
    Replace(usize, u8),
    Insert(usize, u8),
    Remove(usize),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Corruption::Replace(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Corruption::Insert(i, b)),
        any::<usize>().prop_map(Corruption::Remove),
    ]
}

/// Applies a corruption; `None` if it changed nothing.
fn corrupt(token: &str, corruption: &Corruption) -> Option<Vec<u8>> {
    let mut bytes = token.as_bytes().to_vec();
    match *corruption {
        Corruption::Replace(index, byte) => {
            let index = index % bytes.len();
            if bytes[index] == byte {
                return None;
            }
            bytes[index] = byte;
        }
        Corruption::Insert(index, byte) => {
            bytes.insert(index % (bytes.len() + 1), byte);
        }
        Corruption::Remove(index) => {
            bytes.remove(index % bytes.len());
        }
    }
    Some(bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_payloads_round_trip(payload in shape(), signed in any::<bool>()) {
        let mode = if signed { SealMode::Signed } else { SealMode::Encrypted };
        let codec = codec(mode);
        let token = codec.seal_at(&payload, &binding(), NOW).expect("seal");
        let opened = codec.open_at::<Shape>(&token, &binding(), NOW).expect("open");
        prop_assert_eq!(opened.payload, payload);
    }

    #[test]
    fn random_json_payloads_round_trip(payload in json_value(), signed in any::<bool>()) {
        let mode = if signed { SealMode::Signed } else { SealMode::Encrypted };
        let codec = codec(mode);
        let token = codec.seal_at(&payload, &binding(), NOW).expect("seal");
        let opened = codec.open_at::<Value>(&token, &binding(), NOW).expect("open");
        prop_assert_eq!(opened.payload, payload);
    }

    #[test]
    fn random_corruptions_never_open(
        payload in shape(),
        signed in any::<bool>(),
        corruptions in prop::collection::vec(corruption(), 1..4),
    ) {
        let mode = if signed { SealMode::Signed } else { SealMode::Encrypted };
        let codec = codec(mode);
        let token = codec.seal_at(&payload, &binding(), NOW).expect("seal");
        let mut current = token.clone();
        let mut bytes = token.as_bytes().to_vec();
        for corruption in &corruptions {
            if let Some(next) = corrupt(&current, corruption) {
                bytes = next;
                current = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
        if let Ok(text) = std::str::from_utf8(&bytes)
            && text != token
        {
            prop_assert!(codec.open_at::<Shape>(text, &binding(), NOW).is_err(), "{:?}", text);
            prop_assert!(codec.open_at::<Value>(text, &binding(), NOW).is_err(), "{:?}", text);
        }
    }

    #[test]
    fn arbitrary_strings_never_open_or_panic(input in any::<String>()) {
        for mode in [SealMode::Encrypted, SealMode::Signed] {
            prop_assert!(codec(mode).open_at::<Value>(&input, &binding(), NOW).is_err());
        }
    }

    #[test]
    fn token_shaped_strings_never_open_or_panic(
        prefix in prop::sample::select(vec!["t1e", "t1s", "t2e", ""]),
        kid in "[A-Za-z0-9_-]{0,17}",
        parts in prop::collection::vec("[A-Za-z0-9_=+/-]{0,80}", 0..4),
    ) {
        let mut input = format!("{prefix}.{kid}");
        for part in &parts {
            input.push('.');
            input.push_str(part);
        }
        prop_assert!(codec(SealMode::Encrypted).open_at::<Value>(&input, &binding(), NOW).is_err());
    }

    #[test]
    fn canonical_json_ignores_key_order_and_matches_serde_json(value in json_value()) {
        let reversed = reversed_keys(&value);
        prop_assert_eq!(canonical_json(&value), canonical_json(&reversed));
        prop_assert_eq!(ArgumentsDigest::of(&value), ArgumentsDigest::of(&reversed));
        // With keys inserted in sorted order, serde_json prints the canonical form
        // (whether or not `preserve_order` is on).
        prop_assert_eq!(
            canonical_json(&value),
            serde_json::to_string(&sorted_keys(&value)).expect("json")
        );
        // And it parses back to the same value.
        let reparsed: Value = serde_json::from_str(&canonical_json(&value)).expect("valid json");
        prop_assert_eq!(canonical_json(&reparsed), canonical_json(&value));
    }
}
