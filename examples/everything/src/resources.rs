//! The resources: static text, static binary, and the `test://template/{id}/data` template.

use tessera_protocol::{BlobResourceContents, ReadResourceResult, ResourceContents};
use tessera_server::{
    RequestContext, ResourceDef, ResourceReply, ResourceTemplateDef, TemplateVariables,
};

use crate::media::PNG_BASE64;

/// The static resources, in listing order (`caching` reads the first one).
pub fn all() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("test://static-text", "static-text")
            .title("Static text")
            .description("A static text resource")
            .mime_type("text/plain")
            .handler(|_ctx: RequestContext, uri| async move {
                ResourceReply::from(contents(ResourceContents::text(
                    uri,
                    Some("text/plain"),
                    "This is the content of the static text resource.",
                )))
            }),
        ResourceDef::new("test://static-binary", "static-binary")
            .title("Static binary")
            .description("A static binary resource (a 1x1 PNG)")
            .mime_type("image/png")
            .handler(|_ctx: RequestContext, uri| async move {
                ResourceReply::from(contents(ResourceContents::Blob(BlobResourceContents {
                    uri,
                    mime_type: Some("image/png".into()),
                    blob: PNG_BASE64.into(),
                    meta: None,
                })))
            }),
    ]
}

/// `test://template/{id}/data`: JSON naming the id it was read with.
pub fn template() -> ResourceTemplateDef {
    ResourceTemplateDef::new("test://template/{id}/data", "template-data")
        .title("Templated data")
        .description("JSON data for any id")
        .mime_type("application/json")
        .handler(read_template)
}

async fn read_template(
    _ctx: RequestContext,
    uri: String,
    vars: TemplateVariables,
) -> ResourceReply {
    let id = vars.get("id").map_or("", String::as_str);
    let data = serde_json::json!({
        "id": id,
        "templateTest": true,
        "data": format!("Data for ID: {id}"),
    });
    contents(ResourceContents::text(
        uri,
        Some("application/json"),
        data.to_string(),
    ))
    .into()
}

/// A read result with one part; the server adds the caching hints.
fn contents(part: ResourceContents) -> ReadResourceResult {
    ReadResourceResult {
        contents: vec![part],
        ..ReadResourceResult::default()
    }
}
