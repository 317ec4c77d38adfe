//! `subscriptions/listen`: a stream of change notifications.

use super::*;

impl McpClient {
    /// Opens a `subscriptions/listen` stream for what `filter` names; the
    /// first event is the server's acknowledgement of what it will send.
    ///
    /// ```no_run
    /// # async fn run(client: tessera_client::McpClient) -> Result<(), tessera_client::ClientError> {
    /// use tessera_client::ListenEvent;
    /// use tessera_protocol::SubscriptionFilter;
    /// let mut listener = client
    ///     .listen(SubscriptionFilter { resources_list_changed: Some(true), ..Default::default() })
    ///     .await?;
    /// while let Some(event) = listener.next().await {
    ///     if let ListenEvent::Notification(n) = event? { println!("{n}"); }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Listener, ClientError> {
        if let Era::Legacy { initialized } = self.era().await? {
            return self.listen_legacy(filter, initialized).await;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = JsonObject::new();
        params.insert(
            "_meta".into(),
            self.meta_for(tessera_protocol::SUBSCRIPTIONS_LISTEN),
        );
        params.insert("notifications".into(), json!(filter));
        let body = json!(JsonRpcRequest::new(
            RequestId::from(id),
            tessera_protocol::SUBSCRIPTIONS_LISTEN,
            Some(&params)
        ));
        let (tx, events) = tokio::sync::mpsc::unbounded_channel();
        // A change heard here makes the cached list it names stale.
        let cache = self.cache.clone();
        let task = match &self.transport {
            Transport::Http(http) => {
                let (http, version) = (http.clone(), self.protocol_version());
                // The stream carries the token; a protected server is signed in to first.
                let token = match &self.oauth {
                    Some(oauth) => {
                        if oauth.lock().await.token().is_none() {
                            self.request("server/discover", JsonObject::new()).await?;
                        }
                        oauth.lock().await.credential()
                    }
                    None => None,
                };
                tokio::spawn(async move {
                    let to = tx.clone();
                    let forward: NotificationHandler = Arc::new(move |n: &Value| {
                        cache.notice(n);
                        drop(to.send(Ok(listener::event_of(n.clone()))));
                    });
                    let mirrored = Mirrored {
                        version: &version,
                        method: tessera_protocol::SUBSCRIPTIONS_LISTEN,
                        name: None,
                        params: Vec::new(),
                        open_ended: true,
                        token: token.as_ref(),
                    };
                    let end = http.exchange(&body, id, mirrored, Some(&forward)).await;
                    let _ = tx.send(ended(end));
                })
            }
            Transport::Stdio(stdio) => {
                let stdio = Arc::clone(stdio);
                let (to, mut notifications) = tokio::sync::mpsc::unbounded_channel();
                stdio.route(id, to);
                let routed = Routed(Arc::clone(&stdio), id);
                tokio::spawn(async move {
                    let _routed = routed;
                    let forward = async {
                        while let Some(n) = notifications.recv().await {
                            cache.notice(&n);
                            let _ = tx.send(Ok(listener::event_of(n)));
                        }
                    };
                    let end = tokio::select! {
                        end = stdio.exchange(&body, id, None) => end,
                        () = forward => return,
                    };
                    // Notifications already routed come before the end.
                    while let Ok(n) = notifications.try_recv() {
                        cache.notice(&n);
                        let _ = tx.send(Ok(listener::event_of(n)));
                    }
                    let _ = tx.send(ended(end.map(|message| (message, 0))));
                })
            }
        };
        Ok(Listener { events, task })
    }
}

impl McpClient {
    /// What an initialize-era server offers in place of `subscriptions/listen`:
    /// `resources/subscribe` for each resource asked, and over HTTP the
    /// session's standalone stream, filtered to what was asked. The first
    /// event names what the server's capabilities let it send.
    async fn listen_legacy(
        &self,
        asked: SubscriptionFilter,
        initialized: &Value,
    ) -> Result<Listener, ClientError> {
        let Transport::Http(http) = &self.transport else {
            return Err(ClientError::UnsupportedServer(
                "subscriptions/listen is a 2026-07-28 method; this stdio server speaks the initialize era".into(),
            ));
        };
        let offers = |capability: &str, flag: &str| {
            initialized
                .get("capabilities")
                .and_then(|c| c.get(capability))
                .and_then(|c| c.get(flag))
                .and_then(Value::as_bool)
                == Some(true)
        };
        let yes =
            |wanted: Option<bool>, offered: bool| (wanted == Some(true) && offered).then_some(true);
        let agreed = SubscriptionFilter {
            tools_list_changed: yes(asked.tools_list_changed, offers("tools", "listChanged")),
            prompts_list_changed: yes(asked.prompts_list_changed, offers("prompts", "listChanged")),
            resources_list_changed: yes(
                asked.resources_list_changed,
                offers("resources", "listChanged"),
            ),
            resource_subscriptions: asked
                .resource_subscriptions
                .clone()
                .filter(|uris| !uris.is_empty() && offers("resources", "subscribe")),
            // The initialize era has no 2026-07-28 task notifications.
            task_ids: None,
        };
        for uri in agreed.resource_subscriptions.iter().flatten() {
            let mut params = JsonObject::new();
            params.insert("uri".into(), json!(uri));
            self.send_legacy("resources/subscribe", params).await?;
        }
        let (tx, events) = tokio::sync::mpsc::unbounded_channel();
        let _ = tx.send(Ok(ListenEvent::Acknowledged(agreed.clone())));
        let (http, version) = (http.clone(), self.protocol_version());
        let token = self.oauth_token().await;
        let cache = self.cache.clone();
        let task = tokio::spawn(async move {
            let to = tx.clone();
            let forward: NotificationHandler = Arc::new(move |n: &Value| {
                let wanted = match n.get("method").and_then(Value::as_str) {
                    Some("notifications/tools/list_changed") => agreed.tools_list_changed.is_some(),
                    Some("notifications/prompts/list_changed") => {
                        agreed.prompts_list_changed.is_some()
                    }
                    Some("notifications/resources/list_changed") => {
                        agreed.resources_list_changed.is_some()
                    }
                    Some("notifications/resources/updated") => {
                        let uri = n
                            .get("params")
                            .and_then(|p| p.get("uri"))
                            .and_then(Value::as_str);
                        agreed
                            .resource_subscriptions
                            .iter()
                            .flatten()
                            .any(|u| Some(u.as_str()) == uri)
                    }
                    _ => false,
                };
                if wanted {
                    cache.notice(n);
                    drop(to.send(Ok(ListenEvent::Notification(n.clone()))));
                }
            });
            let end = http
                .standalone_stream(&version, token.as_ref(), &forward)
                .await;
            let _ = tx.send(end.map(|()| ListenEvent::Ended));
        });
        Ok(Listener { events, task })
    }
}

/// Routes a stdio subscription's notifications for as long as it lives.
pub(super) struct Routed(Arc<StdioTransport>, i64);

impl Drop for Routed {
    fn drop(&mut self) {
        self.0.unroute(self.1);
    }
}

/// How a subscription's response (and its HTTP status) ends it: a result is a
/// graceful end, an error is reported.
pub(super) fn ended(
    response: Result<(Value, u16), ClientError>,
) -> Result<ListenEvent, ClientError> {
    let (message, status) = response?;
    match message.get("error") {
        Some(error) => Err(ClientError::Rpc {
            status,
            error: serde_json::from_value(error.clone())
                .map_err(|e| ClientError::Protocol(format!("malformed error: {e}")))?,
        }),
        None => Ok(ListenEvent::Ended),
    }
}
