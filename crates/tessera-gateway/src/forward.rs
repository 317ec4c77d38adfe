//! A tool call, prompt or resource read, forwarded to the upstream that
//! offers it, its questions relayed round by round.
//!
//! Every round of the client's call is served by this handler, on any
//! instance. What it carries between rounds travels in the gateway's own
//! ticket, sealed, bound to the client's call and principal, expiring and
//! redeemed once:
//!
//! - a 2026-07-28 upstream's `requestState` and its questions: the retry
//!   sends the client's answers and that state back to the same upstream,
//!   from whichever instance serves it (the upstream's state is never shown
//!   to the client as it is);
//! - a held call's instance and id and the question it pushed: the retry's
//!   answer goes to that call, on that instance.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::rounds::{Reply, reply_of};
use tessera_protocol::{
    CLIENT_CAPABILITIES_KEY, INPUT_RESPONSES, InputRequests, JsonObject, REQUEST_STATE,
};
use tessera_server::{Context, HandlerError, ServerError};

use crate::Gateway;
use crate::held::Outcome;
use crate::upstream::{Era, Upstream, UpstreamError};

/// What the gateway's ticket carries between rounds.
#[derive(Serialize, Deserialize)]
enum Carried {
    /// A 2026-07-28 upstream asked: which, its state, and its questions.
    #[serde(rename = "m")]
    Relayed {
        #[serde(rename = "u")]
        upstream: String,
        #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
        state: Option<String>,
        #[serde(rename = "q")]
        asked: InputRequests,
    },
    /// A held call pushed a question: where it is held, and the question.
    #[serde(rename = "h")]
    Held {
        #[serde(rename = "i")]
        instance: String,
        #[serde(rename = "c")]
        call: String,
        #[serde(rename = "q")]
        asked: InputRequests,
    },
}

/// Serves one round of `method` (`tools/call`, `prompts/get`,
/// `resources/read`) with `params`, for the upstream that offers it; the
/// upstream's final result, as it sent it.
pub(crate) async fn forward(
    gateway: &Gateway,
    ctx: &Context,
    upstream: &Arc<Upstream>,
    method: &str,
    params: JsonObject,
) -> Result<Value, HandlerError> {
    let carried = ctx.carried::<Carried>();
    // A template two upstreams both match: a round goes to the upstream that
    // started the call, whichever one serves the URI now.
    if let Some(Carried::Relayed {
        upstream: started, ..
    }) = &carried
        && started != upstream.name()
    {
        return Err(HandlerError::server(ServerError::invalid_params(format!(
            "this call was started with upstream {started:?}, which no longer serves it; start the call again"
        ))));
    }
    match carried {
        None => match upstream.era().await.map_err(failure)? {
            Era::Modern => relayed_round(ctx, upstream, method, params, None, None).await,
            Era::Initialize => {
                let slot = (gateway.held)
                    .reserve(ctx.caller().as_deref())
                    .map_err(refused)?;
                let events = upstream
                    .start_held(method.to_owned(), params, ctx.client_capabilities())
                    .await
                    .map_err(failure)?;
                let outcome = gateway
                    .held
                    .next(
                        upstream.name(),
                        events,
                        slot,
                        ctx.principal().map(str::to_owned),
                        None,
                        ctx.client_capabilities(),
                    )
                    .await;
                settle(ctx, outcome, gateway.instances.name())
            }
        },
        Some(Carried::Relayed { state, asked, .. }) => {
            let answers = ctx.relay_answers(&asked)?;
            relayed_round(ctx, upstream, method, params, Some(answers), state).await
        }
        Some(Carried::Held {
            instance,
            call,
            asked,
        }) => {
            let mut answers = ctx.relay_answers(&asked)?;
            let answer = asked
                .keys()
                .next()
                .and_then(|key| answers.shift_remove(key));
            let outcome = gateway
                .instances
                .answer(
                    &instance,
                    &call,
                    ctx.principal(),
                    answer,
                    ctx.client_capabilities(),
                )
                .await;
            settle(ctx, outcome, &instance)
        }
    }
}

/// One round relayed to a 2026-07-28 upstream: the client's answers and the
/// upstream's state sent on, and what comes back put to the client.
async fn relayed_round(
    ctx: &Context,
    upstream: &Upstream,
    method: &str,
    mut params: JsonObject,
    answers: Option<tessera_protocol::InputResponses>,
    state: Option<String>,
) -> Result<Value, HandlerError> {
    if let Some(answers) = answers {
        params.insert(INPUT_RESPONSES.into(), serde_json::to_value(answers)?);
    }
    if let Some(state) = state {
        params.insert(REQUEST_STATE.into(), Value::String(state));
    }
    // The upstream asks only what this client can answer.
    let mut meta = JsonObject::new();
    meta.insert(
        CLIENT_CAPABILITIES_KEY.into(),
        serde_json::to_value(ctx.client_capabilities())?,
    );
    params.insert("_meta".into(), Value::Object(meta));
    let result = upstream.request(method, params).await.map_err(failure)?;
    match reply_of(result)
        .map_err(|e| HandlerError::msg(format!("upstream {:?} answered: {e}", upstream.name())))?
    {
        Reply::Complete(result) => Ok(result),
        Reply::Task(_) => Err(HandlerError::msg(format!(
            "upstream {:?} answered with a task, which the gateway does not relay",
            upstream.name()
        ))),
        Reply::InputRequired { requests, state } => {
            ctx.carry(&Carried::Relayed {
                upstream: upstream.name().to_owned(),
                state,
                asked: requests.clone(),
            })?;
            Err(ctx.relay_ask(requests).into())
        }
    }
}

/// What a held call (held on instance `holder`) said, as this round's end:
/// its result, its error, or its question put to the client.
fn settle(ctx: &Context, outcome: Outcome, holder: &str) -> Result<Value, HandlerError> {
    match outcome {
        Outcome::Done(result) => Ok(result),
        Outcome::Failed(error) => Err(HandlerError::rpc(error)),
        Outcome::Asked { call, key, request } => {
            let asked: InputRequests = [(key, *request)].into_iter().collect();
            ctx.carry(&Carried::Held {
                // The call stays where it is held: the ticket says so to whichever instance serves the retry.
                instance: holder.to_owned(),
                call,
                asked: asked.clone(),
            })?;
            Err(ctx.relay_ask(asked).into())
        }
    }
}

/// An upstream failure as the client gets it: the upstream's own JSON-RPC
/// error, or one naming the upstream.
fn failure(error: UpstreamError) -> HandlerError {
    HandlerError::server(crate::upstream::server_error(&error))
}

/// A call that could not be held: the instance is full (503, retry later),
/// or the caller holds as many as it may (429).
fn refused(why: crate::held::Refused) -> HandlerError {
    let message = why.to_string();
    HandlerError::server(match why {
        crate::held::Refused::Instance(_) => ServerError::Unavailable {
            message,
            retry_after_secs: 5,
        },
        crate::held::Refused::Caller(_) => ServerError::RateLimited {
            message,
            retry_after_secs: 5,
        },
    })
}
