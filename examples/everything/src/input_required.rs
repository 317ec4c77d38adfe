//! The `test_input_required_result_*` tools: multi round-trip requests
//! (elicitation, sampling, roots, several at once, several rounds, carried
//! state, capability-aware asking). Each round is a fresh request: the
//! handler runs again from the top, and what earlier rounds answered comes
//! back from the sealed `requestState`.

use tessera::{Context, ToolDef};

use crate::tools::{UserName, sampled_text, sampling};

/// The multi round-trip tools, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        test_input_required_result_elicitation_tool().accepts_upfront::<UserName>(),
        test_input_required_result_sampling_tool(),
        test_input_required_result_list_roots_tool(),
        test_input_required_result_request_state_tool(),
        test_input_required_result_multiple_inputs_tool(),
        test_input_required_result_multi_round_tool(),
        test_input_required_result_tampered_state_tool(),
        test_input_required_result_capabilities_tool(),
    ]
}

/// A yes/no confirmation.
#[tessera::form]
struct Confirm {
    ok: bool,
}

/// Round one of the three-round tool.
#[tessera::form(key = "step1")]
struct Step1 {
    name: String,
}

/// Round two of the three-round tool.
#[tessera::form(key = "step2")]
struct Step2 {
    color: String,
}

/// Asks for the user's name (elicitation under key user_name), then greets
#[tessera::tool]
async fn test_input_required_result_elicitation(ctx: &Context) -> tessera::Result<String> {
    match ctx.ask::<UserName>("What is your name?") {
        Ok(UserName { name }) => Ok(format!("Hello, {name}!")),
        Err(i) if i.is_refusal() => Ok("No name given.".into()),
        Err(i) => Err(i.into()),
    }
}

/// Asks the client's model a question (sampling), then echoes the answer
#[tessera::tool]
async fn test_input_required_result_sampling(ctx: &Context) -> tessera::Result<String> {
    let answer = ctx.sample(
        "capital_question",
        sampling("What is the capital of France?", 100),
    )?;
    Ok(format!("The model answered: {}", sampled_text(&answer)))
}

/// Asks for the client's roots, then lists them
#[tessera::tool]
async fn test_input_required_result_list_roots(ctx: &Context) -> tessera::Result<String> {
    let roots = ctx.list_roots("client_roots")?;
    let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Client roots: {}", uris.join(", ")))
}

/// Asks for a confirmation with sealed requestState, then verifies it (state-ok)
#[tessera::tool]
async fn test_input_required_result_request_state(ctx: &Context) -> tessera::Result<String> {
    // What the first round sealed; the confirmation is read only once it came back.
    let verified = ctx
        .carried::<String>()
        .is_some_and(|s| s == "awaiting confirm");
    ctx.carry(&"awaiting confirm")?;
    let Confirm { ok } = ctx.ask("Please confirm to continue")?;
    if !verified {
        return Err(tessera::HandlerError::msg("requestState was not carried"));
    }
    Ok(format!("state-ok: requestState verified, confirmed={ok}"))
}

/// Asks for a name, a sampled greeting and the roots in one round
#[tessera::tool]
async fn test_input_required_result_multiple_inputs(ctx: &Context) -> tessera::Result<String> {
    // Three questions in one round: each `ask` records its question; `?` sends them together.
    let name = ctx.ask::<UserName>("What is your name?");
    let greeting = ctx.sample("greeting", sampling("Generate a greeting", 50));
    let roots = ctx.list_roots("client_roots");
    let (UserName { name }, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "name={name}; greeting={}; roots={}",
        sampled_text(&greeting),
        roots.roots.len()
    ))
}

/// Asks for a name, then a favourite colour, then answers (three rounds)
#[tessera::tool]
async fn test_input_required_result_multi_round(ctx: &Context) -> tessera::Result<String> {
    let Step1 { name } = ctx.ask("Step 1: What is your name?")?;
    let Step2 { color } = ctx.ask("Step 2: What is your favorite color?")?;
    Ok(format!("{name}'s favorite color is {color}."))
}

/// Asks for a confirmation; a retry whose requestState was altered is refused
#[tessera::tool]
async fn test_input_required_result_tampered_state(ctx: &Context) -> tessera::Result<String> {
    // A tampered ticket never reaches this handler: the request fails with -32602 first.
    let Confirm { ok } = ctx.ask("Confirm to continue")?;
    Ok(format!("requestState intact; confirmed={ok}"))
}

/// Asks only for what the request's client capabilities declare
#[tessera::tool]
async fn test_input_required_result_capabilities(ctx: &Context) -> tessera::Result<String> {
    let caps = ctx.client_capabilities();
    let mut answers = Vec::new();
    if caps.supports_form_elicitation() {
        answers.push(ctx.ask::<UserName>("What is your name?").map(|_| ()));
    }
    if caps.supports_sampling() {
        answers.push(
            ctx.sample("greeting", sampling("Generate a greeting", 50))
                .map(|_| ()),
        );
    }
    if caps.supports_roots() {
        answers.push(ctx.list_roots("client_roots").map(|_| ()));
    }
    if answers.is_empty() {
        return Ok("The client declared no input capabilities; nothing to ask.".into());
    }
    let received = answers.len();
    answers.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(format!("Received {received} input response(s)."))
}
