//! The `increase-counter` tool and the server around it, shared by the
//! native `counter` binary and the `counter-worker` Cloudflare Worker.
//!
//! Round one asks for an amount, round two for a confirmation, round three
//! answers `Counter increased by 5; next value is 15`. A decline, a cancel or
//! an unconfirmed increase answers `Counter increase cancelled.`, and so does
//! an answer that does not fit the form (`{"amount": "five"}`), as in the
//! reference TypeScript counter (`refuse_invalid`; without it the question is
//! asked again, saying why).

use tessera::state::RequestStateCodec;
use tessera::{Arguments, BuildError, Context, McpServer, McpServerBuilder};

/// The server name the tutorial's clients see.
pub const SERVER_NAME: &str = "stateless-mrtr-elicitation-demo";

/// The text of every refusal: a decline, a cancel, an unconfirmed increase, an answer that does not fit.
pub const CANCELLED: &str = "Counter increase cancelled.";

/// The tool's arguments.
#[tessera::arguments]
pub struct CounterArgs {
    /// Current counter value
    current: f64,
}

/// Round one's question.
#[tessera::form]
struct Amount {
    /// The amount to add to the current value
    #[schemars(title = "Amount")]
    amount: f64,
}

/// Round two's question.
#[tessera::form]
struct Confirmation {
    #[schemars(title = "Confirm increase")]
    confirm: bool,
}

/// Calculate a counter increase using two stateless elicitation rounds
#[tessera::tool(name = "increase-counter", on_refusal = CANCELLED, refuse_invalid)]
pub async fn increase_counter(
    ctx: Context,
    Arguments(CounterArgs { current }): Arguments<CounterArgs>,
) -> tessera::Result<String> {
    let Amount { amount } = ctx.ask("By how much should the counter increase?")?;
    let Confirmation { confirm } = ctx.ask(format!("Increase {current} by {amount}?"))?;
    Ok(if confirm {
        format!(
            "Counter increased by {amount}; next value is {}",
            current + amount
        )
    } else {
        CANCELLED.to_owned()
    })
}

/// The whole server, sealing tickets with `codec`.
pub fn counter_server(codec: RequestStateCodec) -> Result<McpServer, BuildError> {
    counter_server_from(
        McpServer::builder(SERVER_NAME, env!("CARGO_PKG_VERSION")).request_state(codec),
    )
}

/// The server `builder` describes (its codec, ledger, scopes and ticket
/// settings) serving `increase-counter`.
pub fn counter_server_from(builder: McpServerBuilder) -> Result<McpServer, BuildError> {
    builder.tool(increase_counter_tool()).build()
}
