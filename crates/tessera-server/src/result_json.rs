//! A result on its way out, as the dispatcher and middleware both see it.

use serde_json::Value;
use serde_json::value::RawValue;

/// A result on its way out: built as a value (lists, discovery, results
/// the era edge reshapes), already serialised with its `_meta` (the multi
/// round-trip methods), or a round that asks, kept unsealed for the era edge.
pub(crate) enum Json {
    Value(Value),
    Raw(Box<RawValue>),
    Kept(Box<crate::round_state::KeptRound>),
}

/// Whether a serialised result asks for input (our `InputRequiredResult`
/// serialises `resultType` first).
pub(crate) fn is_input_required(raw: &RawValue) -> bool {
    raw.get().starts_with(r#"{"resultType":"input_required""#)
}
