//! `everything`: the conformance fixture server, built only from Tessera's public APIs.
//!
//! It exposes every tool, prompt, resource and completion the official MCP
//! conformance suite (`@modelcontextprotocol/conformance`, requirement set
//! 2026-07-28, and 2025-11-25 through `--legacy serve`) calls: content
//! tools, progress and logging, sampling and elicitation, the
//! `test_input_required_result_*` multi round-trip tools, prompts with
//! arguments, images and embedded resources, static and templated resources,
//! the triggers of the subscription checks, and skills (the
//! `io.modelcontextprotocol/skills` extension).
//! See `../shared/conformance/FIXTURE_SPEC.md` for what each one must do.

pub mod changes;
pub mod initialize_era;
pub mod input_required;
mod media;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tasks;
pub mod tools;

use tessera::state::RequestStateCodec;
use tessera::{BuildError, McpServer, McpServerBuilder};

/// The name the server reports in `serverInfo`.
pub const SERVER_NAME: &str = "tessera-everything";

/// The whole fixture, sealing tickets with `codec`.
pub fn everything_server(codec: RequestStateCodec) -> Result<McpServer, BuildError> {
    everything_builder(codec).build()
}

/// The whole fixture as a builder, for settings of the binary's own (a
/// shared task store).
pub fn everything_builder(codec: RequestStateCodec) -> McpServerBuilder {
    let mut builder = McpServer::builder(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .instructions(
            "Conformance fixture: every tool, prompt and resource the MCP conformance suite calls.",
        )
        .request_state(codec);
    for tool in tools::all()
        .into_iter()
        .chain(input_required::all())
        .chain(initialize_era::all())
        .chain(changes::all())
        .chain(tasks::all())
    {
        builder = builder.tool(tool);
    }
    for prompt in prompts::all() {
        builder = builder.prompt(prompt);
    }
    for resource in resources::all() {
        builder = builder.resource(resource);
    }
    builder
        .resource_template(resources::template())
        .skills(skills::all())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::state::{KeyRing, StateKey};

    #[test]
    fn the_fixture_builds_with_every_tool_the_suite_calls() {
        let ring = KeyRing::new("k1", StateKey::generate().unwrap()).unwrap();
        let server = everything_server(RequestStateCodec::new(ring)).unwrap();
        let tools = server.tools();
        let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
        for required in [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_error_handling",
            "test_tool_with_progress",
            "test_missing_capability",
            "test_streaming_elicitation",
            "test_logging_tool",
            "test_tool_with_logging",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_request_state",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_multi_round",
            "test_input_required_result_tampered_state",
            "test_input_required_result_capabilities",
        ] {
            assert!(names.contains(&required), "{required} is missing");
        }
        assert_eq!(names[0], "test_simple_text");
        for tool in server.tools() {
            let d = tool.definition();
            assert!(
                d.description.as_deref().is_some_and(|s| !s.is_empty()),
                "{}",
                d.name
            );
        }
    }
}
