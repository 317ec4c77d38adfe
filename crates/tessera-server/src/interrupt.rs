//! Why a handler stopped before its result: input to ask for, or an answer it did not get.

use std::fmt;

/// The end of a round before the handler's result, returned by
/// [`Context::ask`](crate::Context::ask) and its siblings and passed on with `?`.
///
/// [`InputRequired`](Interrupt::InputRequired) sends every question the
/// handler asked this round to the client (`input_required`); the handler runs
/// again from the top on the retry, where the same `ask` yields the answer.
/// The other kinds mean the user did not give a usable answer. Unless the
/// handler catches them, an invalid answer is asked for again, the question
/// saying what was wrong with the last one; a decline or cancel ends the call
/// with the tool's [refusal result](crate::ToolDef::on_refusal) when it
/// declares one, else with a sentence saying so:
///
/// ```
/// # use tessera_server::{Context, Form, Interrupt};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Confirm { ok: bool }
/// # impl Form for Confirm { const KEY: &'static str = "confirm"; }
/// fn confirmed(ctx: &Context) -> Result<bool, Interrupt> {
///     match ctx.ask::<Confirm>("Go ahead?") {
///         Ok(Confirm { ok }) => Ok(ok),
///         Err(i) if i.is_refusal() => Ok(false),
///         Err(i) => Err(i),
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Interrupt {
    /// Questions are pending: end this round with `input_required`.
    InputRequired,
    /// The user explicitly declined the request under `key`.
    Declined {
        /// The input request's key.
        key: String,
    },
    /// The user dismissed the request under `key`.
    Cancelled {
        /// The input request's key.
        key: String,
    },
    /// The answer under `key` does not fit what was asked (the question is asked again
    /// if the interrupt ends the round).
    Invalid {
        /// The input request's key.
        key: String,
        /// What does not fit.
        reason: String,
    },
    /// The form asked under `key` cannot be shown (a type the restricted schema cannot express).
    UnusableForm {
        /// The input request's key.
        key: String,
        /// What the form cannot show.
        problem: String,
    },
    /// The rest of the call runs as a task the client polls
    /// ([`Context::begin_task`](crate::Context::begin_task)).
    StartTask,
}

impl Interrupt {
    /// Whether the user refused to answer: declined or cancelled. (An
    /// answer that does not fit is not a refusal: [`is_invalid`](Self::is_invalid).)
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Declined { .. } | Self::Cancelled { .. })
    }

    /// Whether the answer did not fit the question; passed on with `?`, the
    /// question is asked again, saying why.
    pub fn is_invalid(&self) -> bool {
        matches!(self, Self::Invalid { .. })
    }

    /// The result a tool gives for a refusal when it declares none of its own.
    pub(crate) fn default_refusal_text(&self) -> String {
        match self {
            Self::Declined { key } => format!("The user declined to answer {key}."),
            Self::Cancelled { key } => format!("The user cancelled the request for {key}."),
            Self::Invalid { key, reason } => format!("The answer to {key} was not valid: {reason}"),
            Self::InputRequired | Self::UnusableForm { .. } | Self::StartTask => self.to_string(),
        }
    }
}

impl fmt::Display for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InputRequired => f.write_str("input required"),
            Self::Declined { key } => write!(f, "the user declined {key}"),
            Self::Cancelled { key } => write!(f, "the user cancelled {key}"),
            Self::Invalid { key, reason } => write!(f, "invalid answer to {key}: {reason}"),
            Self::UnusableForm { key, problem } => {
                write!(f, "the form {key} cannot be shown: {problem}")
            }
            Self::StartTask => f.write_str("the call goes on as a task"),
        }
    }
}
