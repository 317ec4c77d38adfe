//! The multi round-trip engine shared by tools, prompts and resources: open
//! the ticket, read the answers, run the handler, seal the next ticket.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::Deserialize as _;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CallToolResult, ElicitationSchema, INPUT_RESPONSES, InputRequiredResult, REQUEST_STATE,
    ReadResourceResult, ResultMeta,
};
use tessera_state::Binding;

use super::capability_check::check_capabilities;
use super::handled::{Json, ResultShape, serialisation_failed};
use super::resolve::{Parts, Resolved, Ticket};
use super::{Incoming, required_str, take};
use crate::answer::{MAX_ANSWERS_BYTES, Slot, carried, collect, json_len};
use crate::context::{NextRound, TaskMode};
use crate::form::FormCheck;
use crate::handler_error::Kind;
use crate::question::Asked;
use crate::round_state::{KeptRound, TicketBody};
use crate::{
    BoxFuture, Context, HandlerError, Interrupt, McpServer, Offered, PromptArguments, ServerError,
};

/// A handler call waiting for its context.
type PendingRun<'a, R> =
    Box<dyn FnOnce(Context) -> BoxFuture<'static, Result<R, HandlerError>> + Send + 'a>;

/// What a handler's error (other than "input required") becomes.
type ErrorPolicy<'a, R> = Box<dyn FnOnce(HandlerError) -> Result<R, ServerError> + Send + 'a>;

/// What an MRTR-capable method needs: its target, what tickets bind to, and its handler.
struct MrtrCall<'a, R> {
    kind: &'static str,
    target: &'a str,
    binding: Binding,
    single_use: bool,
    /// Forms a client may answer before they are asked ([`ToolDef::accepts_upfront`](crate::ToolDef::accepts_upfront)).
    upfront: Option<&'a IndexMap<String, Arc<ElicitationSchema>>>,
    run: PendingRun<'a, R>,
    on_error: ErrorPolicy<'a, R>,
    /// An answer that does not fit is a refusal (passed to `on_error`), not asked again.
    refuse_invalid: bool,
    /// What a finished result must satisfy before it is sent (a tool's `outputSchema`).
    check: Option<ResultCheck<'a, R>>,
    /// Starts the task when the handler calls `Context::begin_task` (present
    /// only when the call may become one).
    on_task: Option<StartTask<'a>>,
}

/// Hands a call's context over to a task (the tasks extension).
type StartTask<'a> =
    Box<dyn FnOnce(Context) -> BoxFuture<'a, Result<Json, ServerError>> + Send + 'a>;

/// A last check on a handler's result; a failure is the server's error, not a result.
type ResultCheck<'a, R> = Box<dyn FnOnce(&R) -> Result<(), ServerError> + Send + 'a>;

/// What a retry carries besides the original request: the echoed ticket
/// (opened when the request was resolved) and the answers.
struct Retry {
    ticket: Ticket,
    input_responses: Option<Value>,
}

impl Retry {
    /// Moves the ticket and the answers out of `params` (nothing is copied);
    /// the ticket opened once, by `resolved` ([`Parts::take_ticket`]).
    fn take(params: &mut Option<Value>, resolved: &mut Parts) -> Self {
        Self {
            ticket: resolved.take_ticket(take(params, REQUEST_STATE).as_ref()),
            input_responses: take(params, INPUT_RESPONSES),
        }
    }
}

impl McpServer {
    pub(super) async fn call_tool(
        &self,
        mut params: Option<Value>,
        incoming: Incoming,
        resolved: Resolved,
    ) -> Result<Json, ServerError> {
        let mut parts = *resolved.0;
        let retry = Retry::take(&mut params, &mut parts);
        let Parts { tool, binding, .. } = parts;
        let arguments = take(&mut params, "arguments");
        let Some(tool) = tool else {
            let name = required_str(params.as_ref(), "name", "tools/call")?;
            return Err(ServerError::invalid_params(format!(
                "Tool {name} not found"
            )));
        };
        let tool: &crate::ToolDef = &tool;
        let name = tool.tool.name.as_str();
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a @ Value::Object(_)) => a,
            Some(_) => {
                return Err(ServerError::invalid_params(
                    "Invalid tools/call params: arguments must be an object",
                ));
            }
        };
        // A protected server: the token must grant what the tool needs.
        self.check_scopes(&incoming.facts, &tool.scopes, || format!("tool {name}"))?;
        // The spec's tools page: servers MUST validate all tool inputs, and
        // input validation errors are tool execution errors (SEP-1303), which
        // the model can read and correct; the handler does not run.
        if let Some(check) = &tool.input_check
            && let Err(mismatch) = check.check(&arguments)
        {
            return Ok(Json::Value(json!(CallToolResult::error(format!(
                "Input validation error: Invalid arguments for tool {name}: {mismatch} (rule: {})",
                mismatch.keyword
            )))));
        }
        let mode = self.task_mode(tool, &incoming)?;
        let task_arguments = match mode {
            TaskMode::MayStart => arguments.clone(),
            _ => Value::Null,
        };
        let handler = Arc::clone(&tool.handler);
        let call = MrtrCall {
            kind: "Tool",
            target: name,
            binding: bound(binding, "tools/call", name)?,
            single_use: tool.single_use,
            upfront: Some(&tool.upfront),
            run: Box::new(move |ctx| handler(ctx, arguments)),
            on_error: Box::new(|error| tool.outcome_of(error)),
            refuse_invalid: tool.refuse_invalid,
            // Only a tool with an outputSchema has anything to check (no box otherwise).
            check: tool.output_check.is_some().then(|| {
                Box::new(|result: &CallToolResult| tool.check_output(result))
                    as ResultCheck<'_, CallToolResult>
            }),
            on_task: (mode == TaskMode::MayStart).then(|| {
                Box::new(move |ctx: Context| {
                    Box::pin(self.start_task(tool, task_arguments, ctx)) as BoxFuture<'_, _>
                }) as StartTask<'_>
            }),
        };
        self.run_mrtr(call, retry, incoming).await
    }

    pub(super) async fn get_prompt(
        &self,
        mut params: Option<Value>,
        incoming: Incoming,
        resolved: Resolved,
    ) -> Result<Json, ServerError> {
        let mut parts = *resolved.0;
        let retry = Retry::take(&mut params, &mut parts);
        let Parts {
            catalog, binding, ..
        } = parts;
        let arguments = match take(&mut params, "arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a) => a,
        };
        let (name, prompt) = {
            let name = required_str(params.as_ref(), "name", "prompts/get")?;
            catalog
                .prompts
                .get_key_value(name)
                .filter(|(_, p)| self.shows(&incoming.facts, Offered::Prompt(p)))
                .ok_or_else(|| ServerError::invalid_params(format!("Prompt {name} not found")))?
        };
        self.check_scopes(&incoming.facts, &prompt.scopes, || format!("prompt {name}"))?;
        let args = PromptArguments::deserialize(&arguments).map_err(|e| {
            ServerError::invalid_params(format!(
                "Invalid prompts/get arguments (a map of strings): {e}"
            ))
        })?;
        if let Some(missing) = prompt.missing_argument(&args) {
            return Err(ServerError::invalid_params(format!(
                "Missing required argument {missing:?} for prompt {name}"
            )));
        }
        let handler = Arc::clone(&prompt.handler);
        let call = MrtrCall {
            kind: "Prompt",
            target: name,
            binding: bound(binding, "prompts/get", name)?,
            single_use: false,
            upfront: None,
            run: Box::new(move |ctx| handler(ctx, args)),
            refuse_invalid: false,
            on_error: Box::new(|error| {
                Err(server_error(error, || {
                    ServerError::invalid_params(format!("Prompt {name} not found"))
                }))
            }),
            check: None,
            on_task: None,
        };
        self.run_mrtr(call, retry, incoming).await
    }

    pub(super) async fn read_resource(
        &self,
        mut params: Option<Value>,
        incoming: Incoming,
        resolved: Resolved,
    ) -> Result<Json, ServerError> {
        let mut parts = *resolved.0;
        let retry = Retry::take(&mut params, &mut parts);
        let Parts {
            catalog, binding, ..
        } = parts;
        let uri = required_str(params.as_ref(), "uri", "resources/read")?;
        let (handler, read) = self.find_resource(&catalog, uri, &incoming.facts)?;
        let hint = self.read_cache;
        let call = MrtrCall {
            kind: "Resource",
            target: uri,
            binding: bound(binding, "resources/read", uri)?,
            single_use: false,
            upfront: None,
            run: Box::new(move |ctx| {
                Box::pin(async move {
                    let mut result: ReadResourceResult = handler(ctx, read).await?;
                    // Caching hints the handler left out come from the server's defaults.
                    result.ttl_ms.get_or_insert(hint.ttl_ms);
                    result.cache_scope.get_or_insert(hint.scope);
                    Ok(result)
                })
            }),
            refuse_invalid: false,
            on_error: Box::new(|error| {
                Err(server_error(error, || ServerError::ResourceNotFound {
                    uri: uri.to_owned(),
                }))
            }),
            check: None,
            on_task: None,
        };
        self.run_mrtr(call, retry, incoming).await
    }

    /// The caller's token against what a target needs (403 `insufficient_scope`).
    pub(super) fn check_scopes(
        &self,
        facts: &crate::RequestFacts,
        needed: &[String],
        target: impl FnOnce() -> String,
    ) -> Result<(), ServerError> {
        if needed.is_empty() {
            return Ok(());
        }
        crate::scopes::check_scopes(
            self.scope_match.as_ref(),
            facts.auth.as_deref(),
            needed,
            target,
        )
    }

    /// Runs one round of `call`.
    async fn run_mrtr<R: ResultShape>(
        &self,
        call: MrtrCall<'_, R>,
        retry: Retry,
        incoming: Incoming,
    ) -> Result<Json, ServerError> {
        let mut body = match self.redeem(retry.ticket, call.single_use).await? {
            Some(opened) => opened,
            None => {
                // First round: forms the tool accepts up front may be answered already.
                let mut first = TicketBody::default();
                for (key, schema) in call.upfront.into_iter().flatten() {
                    first
                        .asked
                        .insert(key.clone(), Asked::Form(FormCheck::of(schema)));
                }
                first
            }
        };
        let flow = crate::telemetry::flow::Flow::this_round(body.flow.take());
        // A key asked again is answered again: an earlier answer under it no
        // longer counts (a decline now must not fall back to a yes from before).
        body.accepted.retain(|key, _| !body.asked.contains_key(key));
        body.other.retain(|key, _| !body.asked.contains_key(key));
        let responses = match retry.input_responses {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) => Some(o),
            Some(_) => {
                return Err(ServerError::invalid_params(
                    "Invalid params: inputResponses must be an object keyed by input request",
                ));
            }
        };
        let answers = collect(&body.asked, responses);
        let earlier = body
            .accepted
            .into_iter()
            .map(|(k, c)| (k, Slot::Accepted(c)))
            .chain(
                body.other
                    .into_iter()
                    .map(|(k, kept)| (k, Slot::from(kept))),
            )
            .collect();
        let keep = incoming.keep_rounds;
        let ctx = Context::new(
            incoming,
            call.target,
            &self.app_state,
            answers,
            earlier,
            body.state,
            if call.on_task.is_some() {
                TaskMode::MayStart
            } else {
                TaskMode::Synchronous
            },
        );
        let ran = (call.run)(ctx.clone()).await;
        if let (Err(HandlerError(Kind::Interrupt(Interrupt::StartTask))), Some(start)) =
            (&ran, call.on_task)
        {
            return start(ctx).await;
        }
        let outcome = match ran {
            Ok(result) => {
                if let Some(check) = call.check {
                    check(&result)?;
                }
                Ok(result)
            }
            Err(HandlerError(Kind::Interrupt(Interrupt::InputRequired))) => Err(()),
            // An invalid answer the handler passes on is asked for again, the
            // reason in the question (unless the tool refuses it); declines
            // and cancels end the call.
            Err(HandlerError(Kind::Interrupt(Interrupt::Invalid { .. })))
                if !call.refuse_invalid =>
            {
                Err(())
            }
            Err(other) => (call.on_error)(other).map(Ok)?,
        };
        match outcome {
            // The era edge reshapes the result for its client: a value it can edit.
            Ok(result) if keep => serde_json::to_value(result)
                .map(Json::Value)
                .map_err(serialisation_failed),
            Ok(result) => self.finish(result),
            Err(()) if keep => Ok(Json::Kept(Box::new(kept_round(
                ctx,
                call.kind,
                call.target,
                flow,
            )))),
            Err(()) => self.ask(ctx, call.kind, call.target, &call.binding, flow),
        }
    }

    /// Ends the round with the questions the handler asked and a ticket for the retry.
    fn ask(
        &self,
        ctx: Context,
        kind: &str,
        target: &str,
        binding: &Binding,
        flow: Option<crate::telemetry::flow::Flow>,
    ) -> Result<Json, ServerError> {
        let NextRound {
            questions,
            carry,
            relayed,
        } = take_questions(&ctx, flow.as_ref());
        check_capabilities(&questions, ctx.client_capabilities())?;
        let Some(codec) = &self.codec else {
            return Err(ServerError::Internal {
                message:
                    "this server has no requestState key configured, so it cannot ask for input \
                          (McpServerBuilder::request_state)"
                        .into(),
            });
        };
        let next = next_body(ctx, &questions, carry, relayed, flow);
        #[cfg(test)]
        super::resolve::counted::SEALS.with(|seals| seals.set(seals.get() + 1));
        let token = codec.seal(&next, binding).map_err(|e| match e {
            // Answers past what one request may bring: what the client kept adding overflows.
            tessera_state::SealError::TooLarge { len, max }
                if json_len(&next.accepted) + json_len(&next.other) > MAX_ANSWERS_BYTES =>
            {
                ServerError::invalid_params(format!(
                    "The answers given so far are too large to carry to the next round (the requestState \
                     would be {len} bytes; the limit is {max}). Give shorter answers, or start the call again."
                ))
            }
            // Otherwise it is the handler's carried state or its questions: the server's fault.
            tessera_state::SealError::TooLarge { len, max } => ServerError::Internal {
                message: format!(
                    "{kind} {target}: its carried state and questions make the requestState {len} bytes; the limit is {max}"
                ),
            },
            other => ServerError::Internal {
                message: format!("cannot seal requestState: {other}"),
            },
        })?;
        let input_requests = (!questions.is_empty()).then(|| {
            questions
                .into_iter()
                .map(|(k, q)| (k, q.into_wire()))
                .collect()
        });
        self.finish(InputRequiredResult {
            input_requests,
            request_state: Some(token),
            meta: None,
        })
    }

    /// Serialises a modern result once, with `serverInfo` in its `_meta`.
    pub(super) fn finish<R: ResultShape>(&self, mut result: R) -> Result<Json, ServerError> {
        let meta = result.meta_slot().get_or_insert_with(ResultMeta::default);
        if meta.server_info.is_none() {
            meta.server_info = Some(self.info.clone());
        }
        serde_json::value::to_raw_value(&result)
            .map(Json::Raw)
            .map_err(serialisation_failed)
    }
}

/// The questions the handler asked this round (and the state it carries),
/// their keys recorded on the request's span when spans are recorded.
fn take_questions(ctx: &Context, flow: Option<&crate::telemetry::flow::Flow>) -> NextRound {
    let next = ctx.take_next();
    if flow.is_some()
        && let Some(span) = crate::telemetry::request_span()
    {
        let keys: Vec<&str> = next.questions.keys().map(String::as_str).collect();
        span.record("mcp.mrtr.input_keys", keys.join(",").as_str());
    }
    next
}

/// What the next round's ticket carries: the questions asked now, every
/// answer given so far (none when the questions are relayed: their answers
/// were passed on), and the handler's state (which persists across rounds
/// until the handler carries a new one).
fn next_body(
    ctx: Context,
    questions: &IndexMap<String, crate::question::Question>,
    carry: Option<Value>,
    relayed: bool,
    flow: Option<crate::telemetry::flow::Flow>,
) -> TicketBody {
    let (given, state) = ctx.into_answers();
    let (accepted, other) = if relayed {
        Default::default()
    } else {
        carried(given)
    };
    TicketBody {
        state: carry.or(state),
        asked: questions
            .iter()
            .map(|(k, q)| (k.clone(), q.asked()))
            .collect(),
        accepted,
        other,
        flow,
    }
}

/// A round that asks, kept unsealed for the era edge: the questions as the
/// handler asked them (the edge checks them against what its client can
/// answer) and the next round's body.
fn kept_round(
    ctx: Context,
    kind: &'static str,
    target: &str,
    flow: Option<crate::telemetry::flow::Flow>,
) -> KeptRound {
    let NextRound {
        questions,
        carry,
        relayed,
    } = take_questions(&ctx, flow.as_ref());
    let body = next_body(ctx, &questions, carry, relayed, flow);
    KeptRound {
        questions,
        body,
        kind,
        target: target.to_owned(),
    }
}

/// The binding a resolved request carries (the resolution makes one for
/// every request that reaches here).
fn bound(binding: Option<Binding>, method: &str, target: &str) -> Result<Binding, ServerError> {
    binding.ok_or_else(|| ServerError::Internal {
        message: format!("{method} {target}: no ticket binding"),
    })
}

/// A prompt's or resource's handler error as a JSON-RPC error; `not_found` names what is missing.
fn server_error(error: HandlerError, not_found: impl FnOnce() -> ServerError) -> ServerError {
    match error.0 {
        Kind::NotFound => not_found(),
        Kind::InvalidParams(message) => ServerError::InvalidParams { message },
        Kind::Interrupt(i) if i.is_refusal() => ServerError::InvalidParams {
            message: i.default_refusal_text(),
        },
        Kind::Interrupt(i) => ServerError::Internal {
            message: i.to_string(),
        },
        Kind::Failed(e) => ServerError::Internal {
            message: e.to_string(),
        },
        Kind::Server(error) => *error,
    }
}
