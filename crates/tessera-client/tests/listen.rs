//! `McpClient::listen` over Streamable HTTP against the real endpoint: the
//! acknowledgement, changes as they happen, cancellation by dropping, and the
//! graceful end at shutdown.

use std::sync::Arc;
use std::time::Duration;

use tessera_client::{ListenEvent, McpClient};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_protocol::SubscriptionFilter;
use tessera_server::{Context, McpServer, MemoryBus, ResourceDef};
use tokio::net::TcpListener;

async fn next(l: &mut tessera_client::Listener) -> ListenEvent {
    tokio::time::timeout(Duration::from_secs(5), l.next())
        .await
        .expect("an event within 5 s")
        .expect("the stream is open")
        .expect("no error")
}

#[tokio::test]
async fn listen_over_http_from_acknowledgement_to_graceful_end() {
    let bus = Arc::new(MemoryBus::default());
    let server = Arc::new(
        McpServer::builder("notes", "1.0.0")
            .resource(ResourceDef::new(
                "notes://list",
                "list",
                |_: Context| async { "[]".to_owned() },
            ))
            .change_bus(Arc::clone(&bus) as _)
            .build()
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let endpoint = McpEndpoint::new(Arc::clone(&server), EndpointOptions::default());
    tokio::spawn(tessera_http::serve(
        listener,
        endpoint,
        std::future::pending(),
    ));

    let client = McpClient::builder(&url).build().unwrap();
    let filter = SubscriptionFilter {
        resources_list_changed: Some(true),
        resource_subscriptions: Some(vec!["notes://list".into()]),
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut listening = client.listen(filter.clone()).await.unwrap();
    let mut dropped = client.listen(filter).await.unwrap();
    // The server has no tools: toolsListChanged is not acknowledged.
    let ListenEvent::Acknowledged(agreed) = next(&mut listening).await else {
        panic!("the acknowledgement comes first");
    };
    assert_eq!(agreed.tools_list_changed, None);
    assert_eq!(agreed.resources_list_changed, Some(true));
    next(&mut dropped).await;
    assert_eq!(bus.listener_count(), 2);
    drop(dropped);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        bus.listener_count(),
        1,
        "closing the stream ends the subscription on the server"
    );

    server
        .notifier()
        .resource_updated("notes://list")
        .await
        .unwrap();
    let ListenEvent::Notification(n) = next(&mut listening).await else {
        panic!("a notification")
    };
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "notes://list");

    server.end_subscriptions();
    assert_eq!(next(&mut listening).await, ListenEvent::Ended);
    assert!(listening.next().await.is_none());
}
