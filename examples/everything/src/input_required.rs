//! The `test_input_required_result_*` tools: multi round-trip requests
//! (elicitation, sampling, roots, several at once, several rounds, sealed
//! state, capability-aware asking). Each round is a fresh request; what a
//! later round needs comes back in the sealed `requestState`.

use serde::{Deserialize, Serialize};
use tessera_protocol::CallToolResult;
use tessera_server::{
    Answer, ElicitForm, FormField, InputRequired, RequestContext, ToolDef, ToolReply,
};

use crate::tools::{NoArgs, sampled_text, sampling};

/// The multi round-trip tools, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        ToolDef::new("test_input_required_result_elicitation")
            .description("Asks for the user's name (elicitation under key user_name), then greets")
            .expects_input("user_name", name_form("What is your name?"))
            .handler(elicitation),
        ToolDef::new("test_input_required_result_sampling")
            .description("Asks the client's model a question (sampling), then echoes the answer")
            .handler(sampling_tool),
        ToolDef::new("test_input_required_result_list_roots")
            .description("Asks for the client's roots, then lists them")
            .handler(list_roots),
        ToolDef::new("test_input_required_result_request_state")
            .description(
                "Asks for a confirmation with sealed requestState, then verifies it (state-ok)",
            )
            .handler(request_state),
        ToolDef::new("test_input_required_result_multiple_inputs")
            .description("Asks for a name, a sampled greeting and the roots in one round")
            .handler(multiple_inputs),
        ToolDef::new("test_input_required_result_multi_round")
            .description("Asks for a name, then a favourite colour, then answers (three rounds)")
            .handler(multi_round),
        ToolDef::new("test_input_required_result_tampered_state")
            .description(
                "Asks for a confirmation; a retry whose requestState was altered is refused",
            )
            .handler(tampered_state),
        ToolDef::new("test_input_required_result_capabilities")
            .description("Asks only for what the request's client capabilities declare")
            .handler(capabilities),
    ]
}

/// A form with one required text field `name`.
fn name_form(message: &str) -> ElicitForm {
    ElicitForm::new(message).required("name", FormField::string())
}

/// A form with one required yes/no field `ok`.
fn confirm_form(message: &str) -> ElicitForm {
    ElicitForm::new(message).required("ok", FormField::boolean())
}

#[derive(Deserialize)]
struct Name {
    name: String,
}

#[derive(Deserialize)]
struct Confirm {
    ok: bool,
}

#[derive(Deserialize)]
struct Color {
    color: String,
}

/// Whether the user turned the request under `key` down.
fn refused(ctx: &RequestContext<impl Sized>, key: &str) -> bool {
    matches!(ctx.answer(key), Answer::Declined | Answer::Cancelled)
}

async fn elicitation(ctx: RequestContext, _: NoArgs) -> ToolReply {
    if let Some(Name { name }) = ctx.accepted("user_name") {
        return CallToolResult::text(format!("Hello, {name}!")).into();
    }
    if refused(&ctx, "user_name") {
        return CallToolResult::text("No name given.").into();
    }
    // Missing, or an answer that does not fit the form: ask (again).
    InputRequired::new()
        .elicit("user_name", name_form("What is your name?"))
        .into()
}

async fn sampling_tool(ctx: RequestContext, _: NoArgs) -> ToolReply {
    match sampled_text(&ctx.answer("capital_question")) {
        Some(text) => CallToolResult::text(format!("The model answered: {text}")).into(),
        None => InputRequired::new()
            .sample(
                "capital_question",
                sampling("What is the capital of France?", 100),
            )
            .into(),
    }
}

async fn list_roots(ctx: RequestContext, _: NoArgs) -> ToolReply {
    match ctx.answer("client_roots") {
        Answer::Roots(roots) => {
            let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
            CallToolResult::text(format!("Client roots: {}", uris.join(", "))).into()
        }
        _ => InputRequired::new().list_roots("client_roots").into(),
    }
}

/// What `test_input_required_result_request_state` seals between its rounds.
#[derive(Serialize, Deserialize)]
pub struct Pending {
    /// Which question is open.
    awaiting: String,
}

async fn request_state(ctx: RequestContext<Pending>, _: NoArgs) -> ToolReply<Pending> {
    let verified = ctx.state().is_some_and(|p| p.awaiting == "confirm");
    match ctx.accepted::<Confirm>("confirm") {
        Some(Confirm { ok }) if verified => {
            CallToolResult::text(format!("state-ok: requestState verified, confirmed={ok}")).into()
        }
        _ => InputRequired::new()
            .elicit("confirm", confirm_form("Please confirm to continue"))
            .state(Pending {
                awaiting: "confirm".into(),
            })
            .into(),
    }
}

async fn multiple_inputs(ctx: RequestContext, _: NoArgs) -> ToolReply {
    let name = ctx.accepted::<Name>("user_name");
    let greeting = sampled_text(&ctx.answer("greeting"));
    let roots = match ctx.answer("client_roots") {
        Answer::Roots(r) => Some(r.roots.len()),
        _ => None,
    };
    match (name, greeting, roots) {
        (Some(Name { name }), Some(greeting), Some(roots)) => {
            CallToolResult::text(format!("name={name}; greeting={greeting}; roots={roots}")).into()
        }
        _ => InputRequired::new()
            .elicit("user_name", name_form("What is your name?"))
            .sample("greeting", sampling("Generate a greeting", 50))
            .list_roots("client_roots")
            .into(),
    }
}

/// The round `test_input_required_result_multi_round` is in, sealed between rounds.
#[derive(Serialize, Deserialize, PartialEq)]
pub enum Step {
    /// Step 1 (the name) was asked.
    AskedName,
    /// Step 2 (the colour) was asked.
    AskedColor,
}

async fn multi_round(ctx: RequestContext<Step>, _: NoArgs) -> ToolReply<Step> {
    let name = ctx.accepted::<Name>("step1");
    let color = ctx.accepted::<Color>("step2");
    match (ctx.state(), name, color) {
        (Some(Step::AskedColor), Some(Name { name }), Some(Color { color })) => {
            CallToolResult::text(format!("{name}'s favorite color is {color}.")).into()
        }
        (Some(_), Some(_), _) => InputRequired::new()
            .elicit(
                "step2",
                ElicitForm::new("Step 2: What is your favorite color?")
                    .required("color", FormField::string()),
            )
            .state(Step::AskedColor)
            .into(),
        _ => InputRequired::new()
            .elicit("step1", name_form("Step 1: What is your name?"))
            .state(Step::AskedName)
            .into(),
    }
}

async fn tampered_state(ctx: RequestContext, _: NoArgs) -> ToolReply {
    // A tampered ticket never reaches this handler: the request fails with -32602 first.
    match ctx.accepted::<Confirm>("confirm") {
        Some(Confirm { ok }) => {
            CallToolResult::text(format!("requestState intact; confirmed={ok}")).into()
        }
        None => InputRequired::new()
            .elicit("confirm", confirm_form("Confirm to continue"))
            .into(),
    }
}

async fn capabilities(ctx: RequestContext, _: NoArgs) -> ToolReply {
    let caps = ctx.client_capabilities();
    let answered = ["user_name", "greeting", "client_roots"]
        .into_iter()
        .filter(|k| ctx.answer(k) != Answer::Missing)
        .count();
    if answered > 0 {
        return CallToolResult::text(format!("Received {answered} input response(s).")).into();
    }
    let mut ask = InputRequired::new();
    if caps.supports_form_elicitation() {
        ask = ask.elicit("user_name", name_form("What is your name?"));
    }
    if caps.supports_sampling() {
        ask = ask.sample("greeting", sampling("Generate a greeting", 50));
    }
    if caps.supports_roots() {
        ask = ask.list_roots("client_roots");
    }
    if ask.is_empty() {
        return CallToolResult::text("The client declared no input capabilities; nothing to ask.")
            .into();
    }
    ask.into()
}
