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

/// An answer other than accepted content (forms, URLs), carried in the ticket to later rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Kept {
    #[serde(rename = "s")]
    Sampled(Box<CreateMessageResult>),
    #[serde(rename = "r")]
    Roots(ListRootsResult),
}

impl From<Kept> for Slot {
    fn from(kept: Kept) -> Self {
        match kept {
            Kept::Sampled(r) => Self::Sampled(r),
            Kept::Roots(r) => Self::Roots(r),
        }
    }
}

/// Answers to carry in the next ticket: accepted contents and other kept answers
/// (refusals and invalid answers are not carried).
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
            Slot::Declined | Slot::Cancelled | Slot::Invalid(_) => {}
        }
    }
    (accepted, other)
}

/// Reads the answers to exactly the keys that were asked; other keys are ignored.
pub(crate) fn collect(
    asked: &IndexMap<String, Asked>,
    responses: Option<JsonObject>,
) -> IndexMap<String, Slot> {
    let mut slots = IndexMap::new();
    let Some(mut responses) = responses else {
        return slots;
    };
    for (key, kind) in asked {
        if let Some(response) = responses.remove(key) {
            slots.insert(key.clone(), read(kind, response));
        }
    }
    slots
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
