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
        if let Era::Legacy { .. } = self.era().await? {
            return Err(ClientError::UnsupportedServer(
                "subscriptions/listen is a 2026-07-28 method; this server speaks the initialize era".into(),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = JsonObject::new();
        params.insert("_meta".into(), self.meta());
        params.insert("notifications".into(), json!(filter));
        let body = json!(JsonRpcRequest::new(
            RequestId::from(id),
            "subscriptions/listen",
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
                        oauth.lock().await.token().map(str::to_owned)
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
                        method: "subscriptions/listen",
                        name: None,
                        params: Vec::new(),
                        open_ended: true,
                        token: token.as_deref(),
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
