//! The client's answers to the previous round, checked against what was asked.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;
use tessera_protocol::{
    CreateMessageResult, ElicitAction, ElicitResult, JsonObject, ListRootsResult,
};

use crate::ticket::Asked;

/// The answer to one input request of the previous round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer<'a> {
    /// The user submitted the form (content already checked against it) or consented to the URL.
    Accepted(&'a JsonObject),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request.
    Cancelled,
    /// No answer under this key (or nothing was asked under it).
    Missing,
    /// An answer that does not fit what was asked (wrong type, out of bounds, not a choice...).
    Invalid(&'a str),
    /// The client's model answered a sampling request.
    Sampled(&'a CreateMessageResult),
    /// The client listed its roots.
    Roots(&'a ListRootsResult),
}

impl Answer<'_> {
    /// Whether the user accepted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Self::Accepted(_))
    }
}

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

impl Slot {
    pub(crate) fn as_answer(&self) -> Answer<'_> {
        match self {
            Self::Accepted(c) => Answer::Accepted(c),
            Self::Declined => Answer::Declined,
            Self::Cancelled => Answer::Cancelled,
            Self::Invalid(why) => Answer::Invalid(why),
            Self::Sampled(r) => Answer::Sampled(r),
            Self::Roots(r) => Answer::Roots(r),
        }
    }
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
