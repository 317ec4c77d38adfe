//! The round driver: the state machine of one multi round-trip request, with
//! no I/O — questions out, answers in, the next request.
//!
//! Whoever retries a request until it completes drives it with a
//! [`RoundDriver`]: the client (over any transport), the era bridge (which
//! retries on an initialize-era client's behalf), the gateway and the test
//! kit. Each does its own I/O — sending a request, showing a form, pushing a
//! question down a held stream — and asks the driver what comes next, so the
//! rules of the retry live in one place:
//!
//! - a retry carries the answers to exactly the keys asked, and the state
//!   the previous round returned, echoed unchanged;
//! - a round that asks nothing but returns state is retried after a short,
//!   growing pause;
//! - at most `max_rounds` requests are sent; a request still asking at the
//!   last of them ends the flow *before* anyone is asked its questions.
//!
//! The state `S` is whatever the driver's user carries between rounds: the
//! `requestState` string a client echoes, or a value the bridge keeps
//! without sealing it.
//!
//! ```
//! use serde_json::json;
//! use tessera_protocol::rounds::{Reply, RoundDriver, Step};
//! use tessera_protocol::InputRequests;
//!
//! let mut driver = RoundDriver::<String>::new(4);
//! // Round one: nothing to add to the request.
//! let retry = driver.next_request().unwrap();
//! assert!(retry.input_responses.is_none() && retry.request_state.is_none());
//! // The server asks.
//! let requests: InputRequests = serde_json::from_value(json!({
//!     "amount": {"method": "elicitation/create", "params": {"mode": "form",
//!         "message": "How much?", "requestedSchema": {"type": "object", "properties": {}}}}
//! })).unwrap();
//! let step = driver.receive::<()>(Reply::InputRequired { requests, state: Some("t1".into()) });
//! let Ok(Step::Ask(asked)) = step else { panic!() };
//! assert_eq!(asked.keys().collect::<Vec<_>>(), ["amount"]);
//! driver.answer([("amount".to_owned(), json!({"action": "accept", "content": {}}))].into_iter().collect());
//! // Round two carries the answer and the state, echoed.
//! let retry = driver.next_request().unwrap();
//! assert_eq!(retry.request_state.as_deref(), Some("t1"));
//! assert!(retry.input_responses.unwrap().contains_key("amount"));
//! assert!(matches!(driver.receive(Reply::Complete("done")), Ok(Step::Done("done"))));
//! ```

use std::time::Duration;

use serde_json::Value;

use crate::{InputRequests, JsonObject, ResultType};

/// What one round's request came back with, as the driver reads it.
#[derive(Debug)]
pub enum Reply<R, S> {
    /// The final result.
    Complete(R),
    /// The call goes on as a task (the tasks extension).
    Task(R),
    /// The server needs input first: its questions (possibly none) and the
    /// state to send back with the answers.
    InputRequired {
        /// The questions, by key.
        requests: InputRequests,
        /// The state to echo on the retry.
        state: Option<S>,
    },
}

/// What to do after a round.
#[derive(Debug)]
pub enum Step<R> {
    /// The request completed.
    Done(R),
    /// The request became a task: follow it.
    Task(R),
    /// Put these questions to whoever answers them, then give the answers
    /// to [`RoundDriver::answer`] and send [`RoundDriver::next_request`].
    Ask(InputRequests),
    /// Nothing to ask: send the next request after this pause.
    Pause(Duration),
}

/// What a retry adds to the original request's params.
#[derive(Debug)]
pub struct Retry<S> {
    /// `inputResponses`: the answers to the previous round's questions.
    pub input_responses: Option<JsonObject>,
    /// `requestState`: the previous round's state, unchanged.
    pub request_state: Option<S>,
}

impl Retry<String> {
    /// Adds the retry's members to `params` (a copy of the original request's).
    pub fn add_to(self, params: &mut JsonObject) {
        if let Some(responses) = self.input_responses {
            params.insert(crate::INPUT_RESPONSES.into(), Value::Object(responses));
        }
        if let Some(state) = self.request_state {
            params.insert(crate::REQUEST_STATE.into(), Value::String(state));
        }
    }
}

/// The flow still asked for input at its last allowed request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("still asking for input after {rounds} rounds")]
pub struct TooManyRounds {
    /// How many requests were sent.
    pub rounds: usize,
    /// What the last one asked (unanswered).
    pub last: InputRequests,
}

/// The state machine of one multi round-trip request.
#[derive(Debug)]
pub struct RoundDriver<S> {
    max_rounds: usize,
    sent: usize,
    state: Option<S>,
    answers: Option<JsonObject>,
    asked: Vec<InputRequests>,
}

impl<S> RoundDriver<S> {
    /// A driver that sends at most `max_rounds` requests (at least one).
    pub fn new(max_rounds: usize) -> Self {
        Self {
            max_rounds: max_rounds.max(1),
            sent: 0,
            state: None,
            answers: None,
            asked: Vec::new(),
        }
    }

    /// What the next request adds to the original params: nothing for the
    /// first, then the answers given and the state echoed.
    pub fn next_request(&mut self) -> Result<Retry<S>, TooManyRounds> {
        if self.sent >= self.max_rounds {
            return Err(TooManyRounds {
                rounds: self.sent,
                last: self.asked.last().cloned().unwrap_or_default(),
            });
        }
        self.sent += 1;
        Ok(Retry {
            input_responses: self.answers.take(),
            request_state: self.state.take(),
        })
    }

    /// Reads what the last request came back with.
    pub fn receive<R>(&mut self, reply: Reply<R, S>) -> Result<Step<R>, TooManyRounds> {
        match reply {
            Reply::Complete(result) => Ok(Step::Done(result)),
            Reply::Task(result) => Ok(Step::Task(result)),
            Reply::InputRequired { requests, state } => {
                if self.sent >= self.max_rounds {
                    // Nobody is asked a question whose answer could not be sent.
                    return Err(TooManyRounds {
                        rounds: self.sent,
                        last: requests,
                    });
                }
                self.state = state;
                if requests.is_empty() {
                    // The server wants another round with its state: back off a little.
                    self.asked.push(requests);
                    return Ok(Step::Pause(Duration::from_millis(50 * self.sent as u64)));
                }
                self.asked.push(requests.clone());
                Ok(Step::Ask(requests))
            }
        }
    }

    /// The answers to the questions of the last [`Step::Ask`], by key.
    pub fn answer(&mut self, responses: JsonObject) {
        self.answers = Some(responses);
    }

    /// How many requests were sent so far.
    pub fn rounds(&self) -> usize {
        self.sent
    }

    /// The questions of each round that asked (or paused), in order.
    pub fn asked(&self) -> &[InputRequests] {
        &self.asked
    }

    /// The questions of each round, given up by the driver.
    pub fn into_asked(self) -> Vec<InputRequests> {
        self.asked
    }
}

/// Why a result could not be read as a round's reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UnreadableReply(pub String);

/// Reads a result as it came over the wire: its `resultType`, and for
/// `input_required` its `inputRequests` and `requestState`.
pub fn reply_of(result: Value) -> Result<Reply<Value, String>, UnreadableReply> {
    match ResultType::of(&result).map_err(|e| UnreadableReply(e.to_string()))? {
        ResultType::Complete => Ok(Reply::Complete(result)),
        ResultType::Task => Ok(Reply::Task(result)),
        ResultType::InputRequired => {
            let ir: crate::InputRequiredResult = serde_json::from_value(result)
                .map_err(|e| UnreadableReply(format!("input_required result: {e}")))?;
            Ok(Reply::InputRequired {
                requests: ir.input_requests.unwrap_or_default(),
                state: ir.request_state,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asks(key: &str) -> InputRequests {
        serde_json::from_value(json!({ key: {"method": "roots/list"} })).unwrap()
    }

    #[test]
    fn the_last_allowed_round_asks_nobody() {
        let mut driver = RoundDriver::<String>::new(2);
        driver.next_request().unwrap();
        let first = driver.receive::<()>(Reply::InputRequired {
            requests: asks("a"),
            state: Some("s1".into()),
        });
        assert!(matches!(first, Ok(Step::Ask(_))));
        driver.answer(JsonObject::new());
        driver.next_request().unwrap();
        let second = driver.receive::<()>(Reply::InputRequired {
            requests: asks("b"),
            state: Some("s2".into()),
        });
        let err = second.unwrap_err();
        assert_eq!(err.rounds, 2);
        assert!(err.last.contains_key("b"));
        assert!(driver.next_request().is_err());
    }

    #[test]
    fn state_alone_pauses_longer_each_round_and_is_echoed() {
        let mut driver = RoundDriver::<String>::new(5);
        for round in 1..=3u64 {
            let retry = driver.next_request().unwrap();
            assert!(retry.input_responses.is_none());
            if round > 1 {
                assert_eq!(retry.request_state.as_deref(), Some("s"));
            }
            let step = driver.receive::<()>(Reply::InputRequired {
                requests: InputRequests::new(),
                state: Some("s".into()),
            });
            let Ok(Step::Pause(pause)) = step else {
                panic!("{step:?}")
            };
            assert_eq!(pause, Duration::from_millis(50 * round));
        }
    }

    #[test]
    fn a_wire_result_reads_as_its_reply() {
        assert!(matches!(
            reply_of(json!({"content": []})),
            Ok(Reply::Complete(_))
        ));
        assert!(matches!(
            reply_of(json!({"resultType": "task", "task": {}})),
            Ok(Reply::Task(_))
        ));
        let Ok(Reply::InputRequired { requests, state }) = reply_of(json!({
            "resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list"}},
            "requestState": "t"
        })) else {
            panic!()
        };
        assert!(requests.contains_key("r"));
        assert_eq!(state.as_deref(), Some("t"));
        assert!(reply_of(json!({"resultType": "input_required"})).is_err());
        assert!(reply_of(json!({"resultType": "later"})).is_err());
    }
}
