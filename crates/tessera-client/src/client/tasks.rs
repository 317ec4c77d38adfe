//! Calls that go on as tasks: followed to their result, cancelled when their caller gives up.

use super::*;

impl McpClient {
    /// A `tasks/cancel` for task `task`, ready to run on its own (a caller
    /// stopped waiting); its outcome is only logged.
    pub(super) fn cancel_request(
        &self,
        task: String,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params =
            json!({"taskId": task, "_meta": self.meta_for(tessera_protocol::TASKS_CANCEL)});
        let body = json!(JsonRpcRequest::new(
            RequestId::from(id),
            tessera_protocol::TASKS_CANCEL,
            Some(params)
        ));
        let version = self.protocol_version();
        let transport = match &self.transport {
            Transport::Http(http) => Transport::Http(http.clone()),
            Transport::Stdio(stdio) => Transport::Stdio(Arc::clone(stdio)),
        };
        let timeout = self.timeout;
        async move {
            let sent = match &transport {
                Transport::Http(http) => {
                    let mirrored = Mirrored {
                        version: &version,
                        method: tessera_protocol::TASKS_CANCEL,
                        name: Some(&task),
                        params: Vec::new(),
                        open_ended: false,
                        token: None,
                    };
                    http.exchange(&body, id, mirrored, None).await.map(|_| ())
                }
                Transport::Stdio(stdio) => {
                    stdio.exchange(&body, id, Some(timeout)).await.map(|_| ())
                }
            };
            match sent {
                Ok(()) => tracing::debug!(%task, "task cancelled: its caller stopped waiting"),
                Err(e) => tracing::debug!(%task, error = %e, "could not cancel a task"),
            }
        }
    }

    /// Cancels a task the client stopped following, waiting for the
    /// cancellation to go out (a runtime ending right after would drop a
    /// spawned one), and says why it gave up.
    async fn give_up(&self, task: String, why: String) -> ClientError {
        self.cancel_request(task.clone()).await;
        ClientError::TaskUnfinished { task, why }
    }

    /// A `subscriptions/listen` stream for task `id`'s `notifications/tasks`,
    /// when the server agrees to send them and fewer than
    /// [`MAX_TASK_LISTENERS`] tasks are followed so (`None` otherwise: it is polled).
    async fn listen_for_task(&self, id: &str) -> Option<TaskListener> {
        let counted = TaskListenerSlot::take(&self.task_listeners)?;
        let filter = SubscriptionFilter {
            task_ids: Some(vec![id.to_owned()]),
            ..SubscriptionFilter::default()
        };
        let mut listener = self.listen(filter).await.ok()?;
        match listener.next().await {
            Some(Ok(ListenEvent::Acknowledged(agreed)))
                if agreed.task_ids.iter().flatten().any(|t| t == id) =>
            {
                Some(TaskListener {
                    listener,
                    _counted: counted,
                })
            }
            _ => None,
        }
    }

    /// Task `id` as `tasks/get` answers it.
    async fn get_task(&self, id: &str) -> Result<tessera_protocol::Task, ClientError> {
        let mut params = JsonObject::new();
        params.insert("taskId".into(), json!(id));
        let got = self.request(tessera_protocol::TASKS_GET, params).await?;
        let task: tessera_protocol::GetTaskResult = Self::parse("tasks/get", got)?;
        Ok(task.task)
    }

    /// Follows a tool call that went on as a task: by its `notifications/tasks`
    /// when the server sends them (polling then only every
    /// [`MAX_POLL_INTERVAL`], in case one is lost), else by polling `tasks/get`
    /// at the server's interval (at least [`MIN_POLL_INTERVAL`] apart);
    /// answers its input requests with `tasks/update` (at most `max_rounds`
    /// rounds), and returns its result; a caller that stops waiting cancels
    /// it, and so does the client once the task has been followed for `task_wait`.
    pub(super) async fn follow_task(&self, created: Value) -> Result<Value, ClientError> {
        let created: tessera_protocol::CreateTaskResult = Self::parse("tools/call", created)?;
        let id = created.task.task_id;
        let mut guard = CancelTask {
            client: self,
            id: Some(id.clone()),
        };
        let mut interval = created.task.poll_interval_ms;
        let mut heard = self.listen_for_task(&id).await;
        // Listening now: one look at once, for what happened before.
        let mut look_now = heard.is_some();
        // No deadline at all for a wait too long to add to the clock.
        let until = tokio::time::Instant::now().checked_add(self.task_wait);
        let mut rounds = 0;
        let mut answered = false;
        // The rounds answered, by when they were asked and what: a
        // notification of one may arrive after its answer (or after a look
        // showed it), and must not be answered again.
        let mut answered_rounds: Vec<(String, tessera_protocol::InputRequests)> = Vec::new();
        loop {
            // Right after answers, look again soon; else at the server's pace, within bounds.
            let mut wait = if std::mem::take(&mut look_now) {
                Duration::ZERO
            } else if heard.is_some() {
                MAX_POLL_INTERVAL
            } else if std::mem::take(&mut answered) {
                MIN_POLL_INTERVAL
            } else {
                Duration::from_millis(interval.unwrap_or(1000))
                    .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
            };
            if let Some(until) = until {
                let left = until.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    guard.id = None;
                    return Err(self
                        .give_up(
                            id,
                            format!("did not finish within {} s", self.task_wait.as_secs_f64()),
                        )
                        .await);
                }
                // The last poll comes when the wait ends, not a whole interval before.
                wait = wait.min(left);
            }
            let task = match heard.as_mut() {
                Some(following) => tokio::select! {
                    event = following.listener.next() => match event {
                        Some(Ok(ListenEvent::Notification(n))) => match task_notified(&n, &id) {
                            // A server may leave a large result out: fetched then.
                            Some(task) if task.result.is_none() && task.error.is_none()
                                && matches!(task.status, tessera_protocol::TaskStatus::Completed
                                    | tessera_protocol::TaskStatus::Failed) =>
                            {
                                self.get_task(&id).await?
                            }
                            Some(task) => task,
                            None => continue,
                        },
                        // The stream ended (or failed): polled from now on.
                        _ => {
                            heard = None;
                            self.get_task(&id).await?
                        }
                    },
                    () = tokio::time::sleep(wait) => self.get_task(&id).await?,
                },
                None => {
                    tokio::time::sleep(wait).await;
                    self.get_task(&id).await?
                }
            };
            interval = task.poll_interval_ms.or(interval);
            match task.status {
                tessera_protocol::TaskStatus::Working => {}
                tessera_protocol::TaskStatus::InputRequired => {
                    // The task works again once every request has an answer, so
                    // what it shows now is a new round (a key asked again too).
                    let asked = task.input_requests.unwrap_or_default();
                    if asked.is_empty()
                        || answered_rounds
                            .iter()
                            .any(|(at, before)| *at == task.last_updated_at && *before == asked)
                    {
                        continue;
                    }
                    rounds += 1;
                    if rounds > self.max_rounds {
                        guard.id = None;
                        let keys = asked.keys().cloned().collect::<Vec<_>>().join(", ");
                        return Err(self
                            .give_up(
                                id,
                                format!(
                                    "still asked for input ({keys}) after {} rounds",
                                    self.max_rounds
                                ),
                            )
                            .await);
                    }
                    let answers = self.answer(&asked).await?;
                    let mut params = JsonObject::new();
                    params.insert("taskId".into(), json!(id));
                    params.insert(
                        tessera_protocol::INPUT_RESPONSES.into(),
                        Value::Object(answers),
                    );
                    self.request(tessera_protocol::TASKS_UPDATE, params).await?;
                    answered_rounds.push((task.last_updated_at, asked));
                    answered = true;
                }
                tessera_protocol::TaskStatus::Completed => {
                    guard.id = None;
                    return task.result.ok_or_else(|| {
                        ClientError::Protocol(format!("task {id} completed without a result"))
                    });
                }
                tessera_protocol::TaskStatus::Failed => {
                    guard.id = None;
                    return Err(ClientError::Rpc {
                        status: 0,
                        error: task.error.unwrap_or_else(|| {
                            tessera_protocol::ErrorObject::new(
                                tessera_protocol::INTERNAL_ERROR,
                                format!("task {id} failed without an error"),
                            )
                        }),
                    });
                }
                tessera_protocol::TaskStatus::Cancelled => {
                    guard.id = None;
                    return Err(ClientError::TaskCancelled {
                        task: id,
                        message: task.status_message,
                    });
                }
            }
        }
    }
}

/// Tasks one client follows by notification at once: 4 (each holds a listen
/// stream, which servers count per client; more are polled).
pub const MAX_TASK_LISTENERS: usize = 4;

/// A listen stream following one task, counted while it lives.
struct TaskListener {
    listener: Listener,
    _counted: TaskListenerSlot,
}

/// One of a client's [`MAX_TASK_LISTENERS`] places, given back when dropped.
struct TaskListenerSlot(Arc<std::sync::atomic::AtomicUsize>);

impl TaskListenerSlot {
    fn take(count: &Arc<std::sync::atomic::AtomicUsize>) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_TASK_LISTENERS).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(Arc::clone(count)))
    }
}

impl Drop for TaskListenerSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The task a `notifications/tasks` notification carries, if it is task `id`'s.
fn task_notified(n: &Value, id: &str) -> Option<tessera_protocol::Task> {
    if n.get("method").and_then(Value::as_str) != Some(tessera_protocol::TASKS_NOTIFICATION) {
        return None;
    }
    let task: tessera_protocol::Task = serde_json::from_value(n.get("params")?.clone()).ok()?;
    (task.task_id == id).then_some(task)
}

/// The shortest wait between two polls of a task, whatever the server asks.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The longest wait between two polls of a task.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// Cancels a task its caller stopped waiting for (`tasks/cancel`, sent by its own task).
pub(super) struct CancelTask<'a> {
    client: &'a McpClient,
    /// The task, while it has not ended.
    id: Option<String>,
}

impl Drop for CancelTask<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Drop cannot wait; the request goes out on the client's transport.
        let cancel = self.client.cancel_request(id);
        runtime.spawn(cancel);
    }
}
