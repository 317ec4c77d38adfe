//! The client's answers, checked against what was asked, and those carried from earlier rounds.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::{
    CreateMessageResult, ElicitAction, ElicitResult, JsonObject, ListRootsResult,
};

use crate::question::Asked;

/// An answer as stored in the request context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot {
    Accepted(JsonObject),
    Declined,
    Cancelled,
    Invalid(String),
    Sampled(Box<CreateMessageResult>),
    Roots(ListRootsResult),
}

/// An answer other than accepted content (forms, URLs), carried in the ticket
/// to later rounds: a decline stays a decline while the handler goes on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Kept {
    #[serde(rename = "d")]
    Declined,
    #[serde(rename = "c")]
    Cancelled,
    #[serde(rename = "s")]
    Sampled(Box<CreateMessageResult>),
    #[serde(rename = "r")]
    Roots(ListRootsResult),
}

impl From<Kept> for Slot {
    fn from(kept: Kept) -> Self {
        match kept {
            Kept::Declined => Self::Declined,
            Kept::Cancelled => Self::Cancelled,
            Kept::Sampled(r) => Self::Sampled(r),
            Kept::Roots(r) => Self::Roots(r),
        }
    }
}

/// Answers to carry in the next ticket: accepted contents and other kept
/// answers, refusals included (invalid answers are asked again, not carried).
pub(crate) fn carried(
    slots: impl IntoIterator<Item = (String, Slot)>,
) -> (IndexMap<String, JsonObject>, IndexMap<String, Kept>) {
    let mut accepted = IndexMap::new();
    let mut other = IndexMap::new();
    for (key, slot) in slots {
        match slot {
            Slot::Accepted(content) => {
                accepted.insert(key, content);
            }
            Slot::Sampled(r) => {
                other.insert(key, Kept::Sampled(r));
            }
            Slot::Roots(r) => {
                other.insert(key, Kept::Roots(r));
            }
            Slot::Declined => {
                other.insert(key, Kept::Declined);
            }
            Slot::Cancelled => {
                other.insert(key, Kept::Cancelled);
            }
            Slot::Invalid(_) => {}
        }
    }
    (accepted, other)
}

/// The largest answer taken, in bytes of JSON: answers travel in the ticket.
pub(crate) const MAX_ANSWER_BYTES: usize = 8 * 1024;

/// The most answer bytes one request may bring (the ticket's budget is 16 KiB of base64).
pub(crate) const MAX_ANSWERS_BYTES: usize = 12 * 1024;

/// Reads the answers to exactly the keys that were asked; other keys are
/// ignored. An answer over [`MAX_ANSWER_BYTES`], or past [`MAX_ANSWERS_BYTES`]
/// for the request, is invalid (and so asked again), not carried.
pub(crate) fn collect(
    asked: &IndexMap<String, Asked>,
    responses: Option<JsonObject>,
) -> IndexMap<String, Slot> {
    let mut slots = IndexMap::new();
    let Some(mut responses) = responses else {
        return slots;
    };
    let mut total = 0;
    for (key, kind) in asked {
        if let Some(response) = responses.remove(key) {
            let len = json_len(&response);
            if len <= MAX_ANSWER_BYTES {
                total += len;
            }
            let slot = if len > MAX_ANSWER_BYTES {
                Slot::Invalid(format!(
                    "the answer is {len} bytes of JSON; an answer may be at most {MAX_ANSWER_BYTES}"
                ))
            } else if total > MAX_ANSWERS_BYTES {
                Slot::Invalid(format!(
                    "the answers of this request exceed {MAX_ANSWERS_BYTES} bytes of JSON together"
                ))
            } else {
                read(kind, response)
            };
            slots.insert(key.clone(), slot);
        }
    }
    slots
}

/// The length of `value` as compact JSON, counted without building the text.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn read(kind: &Asked, response: Value) -> Slot {
    match kind {
        Asked::Form(check) => match elicit_result(response) {
            Err(why) => Slot::Invalid(why),
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content,
                ..
            }) => {
                let Some(mut content) = content else {
                    return Slot::Invalid("accepted without content".into());
                };
                let schema = check.to_schema();
                match schema.check_content(&content) {
                    // Only the fields the form asked for are kept: nothing else reaches the handler or the ticket.
                    Ok(()) => {
                        content.retain(|k, _| schema.properties.contains_key(k));
                        Slot::Accepted(content)
                    }
                    Err(e) => Slot::Invalid(e.to_string()),
                }
            }
            Ok(other) => not_accepted(other.action),
        },
        Asked::Url => match elicit_result(response) {
            Err(why) => Slot::Invalid(why),
            Ok(r) if r.action == ElicitAction::Accept => Slot::Accepted(JsonObject::new()),
            Ok(r) => not_accepted(r.action),
        },
        Asked::Sample => match CreateMessageResult::deserialize(response) {
            Ok(r) => Slot::Sampled(Box::new(r)),
            Err(e) => Slot::Invalid(format!("not a sampling result: {e}")),
        },
        Asked::Roots => match ListRootsResult::deserialize(response) {
            Ok(r) => Slot::Roots(r),
            Err(e) => Slot::Invalid(format!("not a roots result: {e}")),
        },
    }
}

fn elicit_result(response: Value) -> Result<ElicitResult, String> {
    ElicitResult::deserialize(response).map_err(|e| format!("not an elicitation result: {e}"))
}

fn not_accepted(action: ElicitAction) -> Slot {
    match action {
        ElicitAction::Decline => Slot::Declined,
        _ => Slot::Cancelled,
    }
}
