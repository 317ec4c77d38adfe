//! The resources: static text, static binary, one to subscribe to, and the
//! `test://template/{id}/data` template.

use tessera::protocol::{BlobResourceContents, ResourceContents};
use tessera::{ResourceDef, ResourceTemplateDef};

use crate::media::PNG_BASE64;

/// The static resources, in listing order (`caching` reads the first one).
pub fn all() -> Vec<ResourceDef> {
    vec![
        static_text_resource(),
        static_binary_resource(),
        watched_resource(),
    ]
}

/// A static text resource
#[tessera::resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static text",
    mime_type = "text/plain"
)]
async fn static_text() -> String {
    "This is the content of the static text resource.".into()
}

/// A static binary resource (a 1x1 PNG)
#[tessera::resource(
    uri = "test://static-binary",
    name = "static-binary",
    title = "Static binary",
    mime_type = "image/png"
)]
async fn static_binary() -> Vec<ResourceContents> {
    vec![ResourceContents::Blob(BlobResourceContents {
        uri: "test://static-binary".into(),
        mime_type: Some("image/png".into()),
        blob: PNG_BASE64.into(),
        meta: None,
    })]
}

/// A resource to subscribe to (the suite's `resources/subscribe` names it;
/// a subscription is kept only to a resource the server has)
#[tessera::resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    title = "Watched resource",
    mime_type = "text/plain"
)]
async fn watched() -> String {
    "This resource is watched: its subscribers hear when it changes.".into()
}

/// `test://template/{id}/data`: JSON naming the id it was read with.
pub fn template() -> ResourceTemplateDef {
    template_data_resource()
}

/// JSON data for any id
#[tessera::resource(
    uri = "test://template/{id}/data",
    name = "template-data",
    title = "Templated data",
    mime_type = "application/json"
)]
async fn template_data(id: String) -> String {
    serde_json::json!({
        "id": id,
        "templateTest": true,
        "data": format!("Data for ID: {id}"),
    })
    .to_string()
}
