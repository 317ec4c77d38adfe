//! The `increase-counter` tool.

use serde::Deserialize;
use tessera_protocol::CallToolResult;
use tessera_server::{
    Answer, BuildError, ElicitForm, FormField, InputRequired, McpServer, RequestContext, ToolDef,
    ToolReply,
};
use tessera_state::RequestStateCodec;

/// The server name the tutorial's clients see.
pub const SERVER_NAME: &str = "stateless-mrtr-elicitation-demo";

const CANCELLED: &str = "Counter increase cancelled.";

/// The tool's arguments.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct CounterArgs {
    /// Current counter value
    current: f64,
}

/// Round two's answer.
#[derive(Deserialize)]
struct Amount {
    amount: f64,
}

/// Round three's answer.
#[derive(Deserialize)]
struct Confirmation {
    confirm: bool,
}

fn ask_amount() -> ToolReply {
    InputRequired::new()
        .elicit(
            "amount",
            ElicitForm::new("By how much should the counter increase?").required(
                "amount",
                FormField::number()
                    .title("Amount")
                    .description("The amount to add to the current value"),
            ),
        )
        .into()
}

fn ask_confirmation(current: f64, amount: f64) -> ToolReply {
    InputRequired::new()
        .elicit(
            "confirmation",
            ElicitForm::new(format!("Increase {current} by {amount}?"))
                .required("confirm", FormField::boolean().title("Confirm increase")),
        )
        .into()
}

/// The three rounds. The amount of round two is read back from the sealed
/// ticket in round three (`accepted` looks there), never from the client.
async fn increase_counter(ctx: RequestContext, args: CounterArgs) -> ToolReply {
    if matches!(
        ctx.answer("amount"),
        Answer::Declined | Answer::Cancelled | Answer::Invalid(_)
    ) {
        return CallToolResult::text(CANCELLED).into();
    }
    let Some(Amount { amount }) = ctx.accepted("amount") else {
        return ask_amount();
    };
    match ctx.answer("confirmation") {
        Answer::Missing => ask_confirmation(args.current, amount),
        Answer::Accepted(_)
            if ctx
                .accepted::<Confirmation>("confirmation")
                .is_some_and(|c| c.confirm) =>
        {
            CallToolResult::text(format!(
                "Counter increased by {amount}; next value is {}",
                args.current + amount
            ))
            .into()
        }
        _ => CallToolResult::text(CANCELLED).into(),
    }
}

/// The tool definition.
pub fn increase_counter_tool() -> ToolDef {
    ToolDef::new("increase-counter")
        .description("Calculate a counter increase using two stateless elicitation rounds")
        .handler(increase_counter)
}

/// The whole server, sealing tickets with `codec`.
pub fn counter_server(codec: RequestStateCodec) -> Result<McpServer, BuildError> {
    McpServer::builder(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .request_state(codec)
        .tool(increase_counter_tool())
        .build()
}
