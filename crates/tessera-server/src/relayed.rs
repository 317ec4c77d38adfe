//! Questions made elsewhere, relayed as they are: what a gateway uses to put
//! an upstream server's questions to its own client and pass the answers
//! back.
//!
//! A handler that relays does not ask typed forms of its own: it is handed
//! whole input requests (an upstream's `inputRequests`, or a request the
//! upstream pushed) and wants the client's answers to exactly those, as the
//! client gave them — a decline or a cancel is an answer to pass on, not the
//! end of the handler. The round machinery stays the server's: the questions
//! go out with a sealed ticket bound to the call and the caller, the answers
//! come back checked against what was asked (a form's content against its
//! schema), and an answer that does not fit is asked again with the reason.
//! Relayed answers are not carried to later rounds: each is passed on once.
//!
//! ```
//! use tessera_protocol::{CallToolResult, InputRequests};
//! use tessera_server::{Context, Result};
//!
//! /// Asks whatever `upstream_questions` asks, then reports the answers.
//! async fn relay(ctx: Context, upstream_questions: InputRequests) -> Result<CallToolResult> {
//!     let Some(asked) = ctx.carried::<InputRequests>() else {
//!         ctx.carry(&upstream_questions)?;
//!         return Err(ctx.relay_ask(upstream_questions).into());
//!     };
//!     let answers = ctx.relay_answers(&asked)?;
//!     Ok(CallToolResult::text(format!("{} answers to pass on", answers.len())))
//! }
//! ```

use tessera_protocol::{
    ElicitRequestParams, ElicitResult, InputRequest, InputRequests, InputResponse, InputResponses,
};

use crate::answer::Slot;
use crate::question::Question;
use crate::{Context, Interrupt};

impl Context {
    /// Ends the round asking `requests` as they are, under their keys
    /// (return the interrupt with `Err(..)?`). Their answers come in the next
    /// round, read with [`relay_answers`](Self::relay_answers).
    pub fn relay_ask(&self, requests: InputRequests) -> Interrupt {
        let mut next = self.next();
        next.relayed = true;
        for (key, request) in requests {
            next.questions.insert(key, Question::from_wire(request));
        }
        Interrupt::InputRequired
    }

    /// This round's answers to `asked` (the requests the previous round
    /// relayed), each as the client gave it: an accepted form's content
    /// (checked against the form's schema), a decline, a cancel, a sampling
    /// or roots result. When one is missing or does not fit, all of `asked`
    /// is asked again — an unfit answer's question saying why — and the
    /// round ends (`Err`, to return with `?`).
    pub fn relay_answers(&self, asked: &InputRequests) -> Result<InputResponses, Interrupt> {
        let mut answers = InputResponses::new();
        let mut unfit = None;
        for (key, request) in asked {
            match self.inner.answers.get(key) {
                Some(Slot::Invalid(reason)) => {
                    unfit
                        .get_or_insert_with(Vec::new)
                        .push((key, reason.clone()));
                }
                Some(slot) => match response_of(slot, request) {
                    Some(response) => {
                        answers.insert(key.clone(), response);
                    }
                    None => {
                        let reason =
                            format!("the answer is not one to a {} request", request.method());
                        unfit.get_or_insert_with(Vec::new).push((key, reason));
                    }
                },
                None => {
                    unfit.get_or_insert_with(Vec::new);
                }
            }
        }
        let Some(unfit) = unfit else {
            return Ok(answers);
        };
        let mut next = self.next();
        next.relayed = true;
        for (key, request) in asked {
            let mut question = Question::from_wire(request.clone());
            if let Some((_, reason)) = unfit.iter().find(|(k, _)| *k == key) {
                question.explain_invalid(reason);
            }
            next.questions.insert(key.clone(), question);
        }
        Err(match unfit.into_iter().next() {
            None => Interrupt::InputRequired,
            Some((key, reason)) => Interrupt::Invalid {
                key: key.clone(),
                reason,
            },
        })
    }
}

/// An answer as the client gave it, for the request it answers; `None`
/// when it is not an answer to that kind of request.
fn response_of(slot: &Slot, request: &InputRequest) -> Option<InputResponse> {
    let elicit = matches!(request, InputRequest::Elicit(_));
    Some(match slot {
        Slot::Accepted(content) => match request {
            InputRequest::Elicit(ElicitRequestParams::Form(_)) => {
                InputResponse::Elicit(ElicitResult::accept(content.clone()))
            }
            InputRequest::Elicit(ElicitRequestParams::Url(_)) => {
                InputResponse::Elicit(ElicitResult {
                    content: None,
                    ..ElicitResult::accept(Default::default())
                })
            }
            _ => return None,
        },
        Slot::Declined if elicit => InputResponse::Elicit(ElicitResult::decline()),
        Slot::Cancelled if elicit => InputResponse::Elicit(ElicitResult::cancel()),
        Slot::Sampled(result) if matches!(request, InputRequest::Sample(_)) => {
            InputResponse::Sample((**result).clone())
        }
        Slot::Roots(roots) if matches!(request, InputRequest::ListRoots(_)) => {
            InputResponse::Roots(roots.clone())
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tessera_protocol::{InputRequests, JsonRpcRequest, RequestId};
    use tessera_state::{KeyRing, RequestStateCodec, StateKey};

    use crate::{Context, McpServer, RequestFacts, ToolDef};

    /// A tool that relays the questions it is given, then reports the answers as JSON.
    fn relaying() -> McpServer {
        let key = StateKey::from_secret_str("relayed-questions test key, long enough").unwrap();
        McpServer::builder("relay", "1.0.0")
            .request_state(RequestStateCodec::new(KeyRing::new("k1", key).unwrap()))
            .tool(ToolDef::new(
                "relay",
                |ctx: Context, args: serde_json::Value| async move {
                    let asked: InputRequests = match ctx.carried() {
                        Some(asked) => asked,
                        None => {
                            let asked: InputRequests = serde_json::from_value(args["ask"].clone())?;
                            ctx.carry(&asked)?;
                            return Err(crate::HandlerError::from(ctx.relay_ask(asked)));
                        }
                    };
                    let answers = ctx.relay_answers(&asked)?;
                    crate::Result::<String>::Ok(serde_json::to_string(&answers)?)
                },
            ))
            .build()
            .unwrap()
    }

    fn call(server: &McpServer, id: i64, extra: serde_json::Value) -> serde_json::Value {
        let mut params = json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
            },
            "name": "relay",
            "arguments": {"ask": {
                "who": {"method": "elicitation/create", "params": {"mode": "form", "message": "Who?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
            }}
        });
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let handled = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(server.handle(
                JsonRpcRequest::new(RequestId::from(id), "tools/call", Some(params)),
                RequestFacts::modern(),
            ));
        handled.result_value().unwrap_or_else(|| handled.to_json())
    }

    /// The questions go out as they came; the answers come back as the
    /// client gave them, a decline included; an unfit answer is asked again
    /// with the reason; nothing is carried past the round that passed it on.
    #[test]
    fn relayed_questions_and_answers_pass_as_they_are() {
        let server = relaying();
        let first = call(&server, 1, json!({}));
        assert_eq!(
            first["inputRequests"]["who"]["params"]["message"], "Who?",
            "{first}"
        );
        let state = first["requestState"].clone();

        let declined = call(
            &server,
            2,
            json!({"requestState": state, "inputResponses": {"who": {"action": "decline"}}}),
        );
        let text: serde_json::Value =
            serde_json::from_str(declined["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, json!({"who": {"action": "decline"}}));

        let unfit = call(
            &server,
            3,
            json!({"requestState": state, "inputResponses": {"who": {"action": "accept", "content": {"name": 7}}}}),
        );
        let again = unfit["inputRequests"]["who"]["params"]["message"]
            .as_str()
            .unwrap();
        assert!(
            again.starts_with("Who?") && again.contains("not accepted"),
            "{unfit}"
        );

        let accepted = call(
            &server,
            4,
            json!({"requestState": unfit["requestState"], "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}),
        );
        let text: serde_json::Value =
            serde_json::from_str(accepted["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            text,
            json!({"who": {"action": "accept", "content": {"name": "Ada"}}})
        );
    }
}
