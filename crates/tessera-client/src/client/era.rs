//! The session and its era: the probe that tells a 2026-07-28 server from an
//! initialize-era one, the `initialize` handshake, and requests in the old shape.

use super::*;

impl McpClient {
    /// The server's era, settled on first use. Over HTTP a server is taken
    /// as 2026-07-28. Over stdio the binding's probe decides: `server/discover`
    /// answered (or a recognised version error) means modern; any other error,
    /// or silence, means initialize era (`basic/transports/stdio`).
    pub(super) async fn era(&self) -> Result<&Era, ClientError> {
        self.era
            .get_or_try_init(|| async {
                if matches!(self.transport, Transport::Http(_)) {
                    return match self.mode {
                        ConnectMode::Modern => Ok(Era::Modern),
                        ConnectMode::Legacy => self.initialize().await,
                        // Streamable HTTP's rule: attempt a modern request (discovery).
                        ConnectMode::Auto => {
                            let generation = self.cache.generation();
                            let probe = self.send("server/discover", JsonObject::new()).await;
                            match http_era_of(&probe) {
                                Some(HttpEra::Legacy) => self.initialize().await,
                                Some(HttpEra::Modern) => {
                                    match probe {
                                        // Kept, so that discover() need not ask again.
                                        Ok(result) => {
                                            if let Some(key) = crate::result_cache::ResultCache::key(
                                                "server/discover",
                                                &JsonObject::new(),
                                            ) {
                                                self.cache.keep(generation, key, &result);
                                            }
                                        }
                                        Err(ClientError::Rpc { error, .. })
                                            if error.code == UNSUPPORTED_PROTOCOL_VERSION =>
                                        {
                                            self.adopt_supported(&error)?;
                                        }
                                        Err(_) => {}
                                    }
                                    Ok(Era::Modern)
                                }
                                None => Err(probe.err().unwrap_or_else(|| {
                                    ClientError::Protocol("the probe neither failed nor succeeded".into())
                                })),
                            }
                        }
                    };
                }
                match self.mode {
                    ConnectMode::Modern => return Ok(Era::Modern),
                    ConnectMode::Legacy => return self.initialize().await,
                    ConnectMode::Auto => {}
                }
                let probe = tokio::time::timeout(
                    PROBE_TIMEOUT,
                    self.send("server/discover", JsonObject::new()),
                )
                .await;
                match probe {
                    Ok(Ok(result)) => {
                        let offered = result
                            .get("supportedVersions")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default();
                        match STATELESS_PROTOCOL_VERSIONS
                            .iter()
                            .find(|v| offered.iter().any(|o| o == **v))
                        {
                            Some(v) => {
                                *lock(&self.version) = (*v).to_owned();
                                Ok(Era::Modern)
                            }
                            // Discover answered, yet only handshake-era versions offered: that is an old server's advertisement.
                            None if offered.iter().any(|o| {
                                o.as_str()
                                    .is_some_and(|o| LEGACY_PROTOCOL_VERSIONS.contains(&o))
                            }) =>
                            {
                                self.initialize().await
                            }
                            None => Err(ClientError::UnsupportedServer(format!(
                                "the server supports {offered:?}; this client speaks {}",
                                STATELESS_PROTOCOL_VERSIONS.join(", ")
                            ))),
                        }
                    }
                    Ok(Err(ClientError::Rpc { error, .. }))
                        if error.code == UNSUPPORTED_PROTOCOL_VERSION =>
                    {
                        self.adopt_supported(&error).map(|()| Era::Modern)
                    }
                    // Any other error, a reply that is not a valid response, or silence: an initialize-era server.
                    Ok(Err(ClientError::Rpc { .. } | ClientError::Protocol(_))) | Err(_) => {
                        self.initialize().await
                    }
                    Ok(Err(other)) => Err(other),
                }
            })
            .await
    }

    /// The `initialize` handshake, then `notifications/initialized`.
    pub(super) async fn initialize(&self) -> Result<Era, ClientError> {
        let mut params = JsonObject::new();
        params.insert("protocolVersion".into(), json!(LEGACY_PROTOCOL_VERSIONS[0]));
        params.insert("capabilities".into(), json!(self.capabilities()));
        params.insert("clientInfo".into(), json!(self.client_info));
        let result = self.send_legacy("initialize", params).await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !LEGACY_PROTOCOL_VERSIONS.contains(&version) {
            return Err(ClientError::UnsupportedServer(format!(
                "the server answered initialize with protocol version {version:?}; this client speaks {}",
                LEGACY_PROTOCOL_VERSIONS.join(", ")
            )));
        }
        *lock(&self.version) = version.to_owned();
        if let Some(name) = result
            .get("serverInfo")
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str)
        {
            *lock(&self.server_name) = Some(name.to_owned());
        }
        let initialized = json!(JsonRpcNotification::<Value> {
            jsonrpc: JsonRpcVersion,
            method: tessera_protocol::INITIALIZED_NOTIFICATION.into(),
            params: None,
        });
        match &self.transport {
            Transport::Stdio(stdio) => stdio.notify(&initialized).await?,
            Transport::Http(http) => {
                let token = self.oauth_token().await;
                http.post_message(&initialized, version, token.as_ref())
                    .await?;
                if self.standalone_stream {
                    // Open before the handshake returns, so that a request the
                    // server sends there once a call starts is not lost.
                    let opened = tokio::time::timeout(
                        self.timeout,
                        http.open_standalone(version, token.as_ref()),
                    )
                    .await
                    .unwrap_or_else(|_| {
                        Err(ClientError::Protocol(
                            "the standalone stream was not answered in time".into(),
                        ))
                    });
                    match opened {
                        Ok(response) => {
                            let (http, version) = (http.clone(), version.to_owned());
                            let handler: NotificationHandler = self
                                .on_notification
                                .clone()
                                .unwrap_or_else(|| Arc::new(|_: &Value| {}));
                            let task = tokio::spawn(async move {
                                if let Err(e) = http
                                    .read_standalone(response, &version, token.as_ref(), &handler)
                                    .await
                                {
                                    tracing::info!(error = %e, "the session's standalone stream ended");
                                }
                            });
                            *lock(&self.standalone) = Some(AbortOnDrop(task));
                        }
                        Err(e) => {
                            tracing::info!(error = %e, "the session's standalone stream is not open");
                        }
                    }
                }
            }
        }
        Ok(Era::Legacy {
            initialized: Box::new(result),
        })
    }

    /// Switches to a version the server named in a -32022 error, if we speak one.
    pub(super) fn adopt_supported(&self, error: &ErrorObject) -> Result<(), ClientError> {
        let supported: Vec<String> = error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_default();
        let Some(pick) = STATELESS_PROTOCOL_VERSIONS
            .iter()
            .find(|v| supported.iter().any(|s| s == *v))
        else {
            return Err(ClientError::UnsupportedServer(format!(
                "the server supports {supported:?}; this client speaks {}",
                STATELESS_PROTOCOL_VERSIONS.join(", ")
            )));
        };
        *lock(&self.version) = (*pick).to_owned();
        Ok(())
    }

    /// An initialize-era request: no 2026-07-28 envelope, only the caller's `_meta` keys.
    pub(super) async fn send_legacy(
        &self,
        method: &str,
        mut params: JsonObject,
    ) -> Result<Value, ClientError> {
        let mut meta = self.extra_meta.clone();
        if let Some(Value::Object(given)) = params.remove("_meta") {
            meta.extend(given);
        }
        self.add_trace_context(&mut meta);
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!(JsonRpcRequest::new(
            RequestId::from(id),
            method,
            Some(&params)
        ));
        // A call that may ask is bounded below, its answers' time not counted;
        // the rest by the timeout alone.
        let patience = (!matches!(method, "tools/call" | "prompts/get" | "resources/read"))
            .then_some(self.timeout);
        lock(&self.push_failure).take();
        let exchange = async {
            match &self.transport {
                Transport::Stdio(stdio) => Ok((stdio.exchange(&body, id, patience).await?, 0)),
                Transport::Http(http) => {
                    // The handshake names its version in the body; later requests in the header.
                    let version = if method == "initialize" {
                        LEGACY_PROTOCOL_VERSIONS[0].to_owned()
                    } else {
                        self.protocol_version()
                    };
                    let mirrored = Mirrored {
                        version: &version,
                        method,
                        name: None,
                        params: Vec::new(),
                        open_ended: patience.is_none(),
                        token: None,
                    };
                    self.exchange_signed_in(http, &body, id, mirrored).await
                }
            }
        };
        // A call that may ask is bounded by rounds and by the time it waits
        // on the server, not by the time a person takes to answer.
        let (message, status) = match patience {
            Some(_) => exchange.await?,
            None => self.push_bound.around(exchange).await??,
        };
        match self.settle(message, status) {
            // The call failed because answering a pushed question did: that is the reason to report.
            Err(ClientError::Rpc { .. }) if lock(&self.push_failure).is_some() => {
                Err(lock(&self.push_failure)
                    .take()
                    .unwrap_or(ClientError::TooManyRounds {
                        rounds: 0,
                        asked: Vec::new(),
                    }))
            }
            other => other,
        }
    }
}

/// The era a server was found to speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Era {
    Modern,
    /// Initialize era: the version agreed, and what `initialize` said of the server.
    Legacy {
        initialized: Box<Value>,
    },
}

/// How long a stdio server may take to answer the `server/discover` probe
/// before it is taken for an initialize-era server that stays silent.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the answer to a modern request over HTTP says of the server's era.
pub(super) enum HttpEra {
    Modern,
    Legacy,
}

/// The era an HTTP answer shows: a result or a recognized modern error is a
/// modern server; any other `400 Bad Request` is an initialize-era one
/// (Streamable HTTP, Backward Compatibility: "If the body is empty or is not
/// a recognized modern JSON-RPC error, fall back to initialize"); `None` when
/// the answer tells nothing (the request did not get through).
pub(super) fn http_era_of(answer: &Result<Value, ClientError>) -> Option<HttpEra> {
    match answer {
        Ok(_) => Some(HttpEra::Modern),
        Err(ClientError::Rpc { error, status }) => {
            let supported: Vec<&str> = error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|s| s.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let legacy_only = !supported.is_empty()
                && supported
                    .iter()
                    .all(|v| LEGACY_PROTOCOL_VERSIONS.contains(v));
            match error.code {
                UNSUPPORTED_PROTOCOL_VERSION if legacy_only => Some(HttpEra::Legacy),
                UNSUPPORTED_PROTOCOL_VERSION
                | tessera_protocol::HEADER_MISMATCH
                | tessera_protocol::MISSING_REQUIRED_CLIENT_CAPABILITY => Some(HttpEra::Modern),
                _ if *status == 400 => Some(HttpEra::Legacy),
                _ => Some(HttpEra::Modern),
            }
        }
        Err(ClientError::HttpStatus { status: 400, .. }) => Some(HttpEra::Legacy),
        Err(_) => None,
    }
}
