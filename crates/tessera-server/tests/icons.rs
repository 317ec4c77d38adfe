//! Icons on the server, tools, prompts, resources and templates, through the
//! builders; only `https:` and `data:` sources are published.

use tessera_protocol::Icon;
use tessera_server::{
    BuildError, Context, McpServer, McpServerBuilder, PromptDef, ResourceDef, ResourceTemplateDef,
    TemplateVariables, ToolDef,
};

const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

fn builder(tool_icon: &str) -> McpServerBuilder {
    McpServer::builder("icons", "1")
        .icon(
            Icon::new("https://example.com/server.svg")
                .mime_type("image/svg+xml")
                .size("any"),
        )
        .tool(
            ToolDef::new("t", |_ctx: Context, _a: ()| async { "x" }).icon(
                Icon::new(tool_icon)
                    .mime_type("image/png")
                    .size("48x48")
                    .theme("dark"),
            ),
        )
        .prompt(
            PromptDef::new("p", |_ctx: Context, _a: ()| async { "x".to_owned() })
                .icon(Icon::new(PNG)),
        )
        .resource(
            ResourceDef::new("test://r", "r", |_ctx: Context| async { "x".to_owned() })
                .icon(Icon::new(PNG)),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "test://t/{id}",
                "t",
                |_ctx: Context, _v: TemplateVariables| async { "x".to_owned() },
            )
            .icon(Icon::new(PNG)),
        )
}

#[test]
fn icons_reach_every_definition() {
    let server = builder(PNG).build().unwrap();
    let tools = server.tools();
    let tool = tools[0].definition();
    let icon = &tool.icons.as_ref().unwrap()[0];
    assert_eq!(
        serde_json::to_value(icon).unwrap(),
        serde_json::json!({"src": PNG, "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"})
    );
    assert!(server.prompts()[0].definition().icons.is_some());
    assert!(server.resources()[0].definition().icons.is_some());
}

#[test]
fn unsafe_icon_sources_are_refused_at_build() {
    for src in [
        "http://example.com/i.png",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "https:",
        "/i.png",
    ] {
        let Err(BuildError(message)) = builder(src).build() else {
            panic!("{src} was accepted");
        };
        assert!(message.contains("https: URL or a data: URI"), "{message}");
    }
}
