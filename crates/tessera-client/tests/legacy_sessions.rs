//! The client in the initialize era against a Tessera server that keeps
//! sessions (`Legacy::Serve`): the forms pushed on the call's stream and
//! answered by POST, `listen` on the session's standalone stream with
//! `resources/subscribe`, and `DELETE` at close ("Clients that no longer need
//! a particular session … SHOULD send an HTTP DELETE to the MCP endpoint with
//! the MCP-Session-Id header, to explicitly terminate the session").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde_json::json;
use tessera_client::{ConnectMode, ListenEvent, McpClient, ScriptedAnswer, ScriptedElicitor};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_protocol::SubscriptionFilter;
use tessera_server::{
    ChangeBus, Context, Form, HandlerError, McpServer, MemoryBus, Notifier, ResourceDef, ToolDef,
};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};
use tokio::net::TcpListener;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}
impl Form for Name {
    const KEY: &'static str = "name";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// Each request's method and session id, in order.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// The endpoint, noting each request's method and session id.
#[derive(Clone)]
struct Recording {
    endpoint: McpEndpoint,
    seen: Seen,
}

impl<B> tower_service::Service<http::Request<B>> for Recording
where
    McpEndpoint: tower_service::Service<http::Request<B>>,
{
    type Response = <McpEndpoint as tower_service::Service<http::Request<B>>>::Response;
    type Error = <McpEndpoint as tower_service::Service<http::Request<B>>>::Error;
    type Future = <McpEndpoint as tower_service::Service<http::Request<B>>>::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<http::Request<B>>::poll_ready(&mut self.endpoint, cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let session = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        self.seen
            .lock()
            .unwrap()
            .push((request.method().to_string(), session));
        self.endpoint.call(request)
    }
}

#[tokio::test]
async fn the_initialize_era_client_gets_forms_listens_and_ends_its_session() {
    let bus = Arc::new(MemoryBus::default());
    let key = StateKey::from_secret_str("0123456789abcdef0123456789abcdef!").unwrap();
    let server = Arc::new(
        McpServer::builder("legacy-sessions", "1.0.0")
            .request_state(RequestStateCodec::new(KeyRing::new("k1", key).unwrap()))
            .change_bus(Arc::clone(&bus) as Arc<dyn ChangeBus>)
            .tool(ToolDef::new("greet", |ctx: Context, _: Empty| async move {
                let Name { name } = ctx.ask("Your name?")?;
                Ok::<_, HandlerError>(format!("Hello, {name}!"))
            }))
            .resource(ResourceDef::new(
                "notes://list",
                "list",
                |_: Context| async { "[]".to_owned() },
            ))
            .build()
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let service = Recording {
        endpoint: McpEndpoint::new(Arc::clone(&server), EndpointOptions::default()),
        seen: Arc::clone(&seen),
    };
    tokio::spawn(tessera_http::serve(
        listener,
        service,
        std::future::pending(),
    ));

    let elicitor = Arc::new(ScriptedElicitor::new(HashMap::from([(
        "name".to_owned(),
        ScriptedAnswer::Accept(json!({"name": "Ada"}).as_object().unwrap().clone()),
    )])));
    let client = McpClient::builder(format!("http://{addr}/mcp"))
        .connect_mode(ConnectMode::Legacy)
        .elicitor(elicitor)
        .build()
        .unwrap();
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
    assert!(client.is_initialize_era().await.unwrap());

    let mut listening = client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["notes://list".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), listening.next())
        .await
        .expect("an event within 5 s")
        .expect("the stream is open")
        .expect("no error");
    let ListenEvent::Acknowledged(agreed) = first else {
        panic!("the acknowledgement comes first");
    };
    assert_eq!(
        agreed.resource_subscriptions,
        Some(vec!["notes://list".into()])
    );
    // Published until the standalone stream is open and hears it.
    let notifier = Notifier::new(Arc::clone(&bus) as Arc<dyn ChangeBus>);
    let heard = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            notifier.resource_updated("notes://list").await.unwrap();
            if let Ok(Some(event)) =
                tokio::time::timeout(Duration::from_millis(100), listening.next()).await
            {
                return event.unwrap();
            }
        }
    })
    .await
    .expect("the update within 5 s");
    let ListenEvent::Notification(n) = heard else {
        panic!("{heard:?}");
    };
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "notes://list");
    drop(listening);

    client.close().await;
    let seen = seen.lock().unwrap().clone();
    let session = seen
        .iter()
        .find_map(|(m, s)| (m == "POST").then(|| s.clone()).flatten())
        .expect("requests carried the session");
    assert!(
        seen.iter()
            .any(|(m, s)| m == "DELETE" && s.as_ref() == Some(&session)),
        "the session was ended at close: {seen:?}"
    );
}
