//! `release-gate`: a tool that asks for a change ticket and a rollout
//! percentage, then a yes/no; a prompt; a resource.

use tessera::{Context, McpServerBuilder};

/// The change to roll out.
#[tessera::form]
#[derive(PartialEq)]
pub struct Rollout {
    /// The change ticket, e.g. CHG-1234
    #[schemars(title = "Change ticket")]
    pub ticket: String,
    /// How much of the fleet gets it first
    #[schemars(title = "Rollout percentage", range(min = 1, max = 100))]
    pub rollout: u8,
}

/// Yes or no.
#[tessera::form]
pub enum YesNo {
    Yes,
    No,
}

/// The last word.
#[tessera::form]
pub struct Go {
    /// Roll it out now?
    pub answer: YesNo,
}

/// Opens a release gate after asking what and how much
#[tessera::tool(name = "open-gate", on_refusal = "The gate stays closed.")]
pub async fn open_gate(ctx: Context, service: String) -> tessera::Result<String> {
    let Rollout { ticket, rollout } = ctx.ask(format!("What goes out for {service}?"))?;
    let Go { answer } = ctx.ask(format!("Roll {ticket} out to {rollout}% of {service}?"))?;
    Ok(match answer {
        YesNo::Yes => format!("{ticket} is rolling out to {rollout}% of {service}."),
        YesNo::No => "The gate stays closed.".to_owned(),
    })
}

/// How to write a change ticket
#[tessera::prompt]
pub async fn ticket_help(service: String) -> String {
    format!("Write a change ticket for {service}: what, why, how to roll back.")
}

/// The gate's policy
#[tessera::resource(uri = "gate://policy", mime_type = "text/plain")]
pub async fn policy() -> String {
    "No rollout above 10% before a day at 10%.".to_owned()
}

/// The server: `main` and the tests share it.
pub fn release_gate(builder: McpServerBuilder) -> McpServerBuilder {
    builder
        .tool(open_gate_tool())
        .prompt(ticket_help_prompt())
        .resource(policy_resource())
}
