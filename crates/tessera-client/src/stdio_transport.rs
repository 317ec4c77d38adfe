//! Requests over stdio: a server process spawned by the client, one JSON-RPC message per line.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::{
    BoxFuture, ErrorObject, JsonRpcErrorResponse, JsonRpcNotification, JsonRpcResultResponse,
    RequestId,
};
use tessera_tokio::{Line, LineReader};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use crate::ClientError;
use crate::NotificationHandler;

/// Answers a request the server pushed (initialize era: `elicitation/create`, …).
pub(crate) type PushHandler =
    Arc<dyn Fn(String, Value) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync>;

/// Responses awaited, by request id; `None` once the server's output ended.
type Waiting = Arc<Mutex<Option<HashMap<i64, oneshot::Sender<Value>>>>>;

/// The longest line read from a server (a large resource fits; more is skipped).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The server's stdin, shared by requests and answers to pushed requests.
type Input = Arc<tokio::sync::Mutex<Option<ChildStdin>>>;

/// Open `subscriptions/listen` streams, by request id: their notifications go there.
type Streams = Arc<Mutex<HashMap<i64, tokio::sync::mpsc::UnboundedSender<Value>>>>;

/// A server process and the pipe to it.
pub(crate) struct StdioTransport {
    /// The program started, for messages and to name who asks.
    pub(crate) program: String,
    input: Input,
    child: tokio::sync::Mutex<Child>,
    waiting: Waiting,
    streams: Streams,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl StdioTransport {
    /// Starts `program` with `args` (and `env` added); its stderr passes through to ours.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        on_notification: Option<NotificationHandler>,
        on_push: PushHandler,
    ) -> Result<Self, ClientError> {
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ClientError::Process(format!("cannot start {program:?}: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Process(format!(
                "{program:?} started without pipes"
            )));
        };
        let waiting: Waiting = Arc::new(Mutex::new(Some(HashMap::new())));
        let input: Input = Arc::new(tokio::sync::Mutex::new(Some(stdin)));
        let streams: Streams = Arc::default();
        tokio::spawn(read_messages(
            stdout,
            Reader {
                waiting: Arc::clone(&waiting),
                input: Arc::clone(&input),
                streams: Arc::clone(&streams),
                on_notification,
                on_push,
            },
        ));
        Ok(Self {
            program: program.to_owned(),
            input,
            child: tokio::sync::Mutex::new(child),
            waiting,
            streams,
        })
    }

    /// Sends request `id` and waits for its response message, at most
    /// `patience` when given; a request given up (timed out, or its caller
    /// gone) is withdrawn with `notifications/cancelled`.
    pub(crate) async fn exchange(
        &self,
        body: &Value,
        id: i64,
        patience: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let (tx, rx) = oneshot::channel();
        match lock(&self.waiting).as_mut() {
            Some(w) => w.insert(id, tx),
            None => return Err(self.exited()),
        };
        let mut withdraw = Withdraw {
            transport: self,
            id,
            open: true,
        };
        if let Err(e) = write(&self.input, body).await {
            return Err(ClientError::Process(format!(
                "the server process {:?} stopped reading (exited?): {e}",
                self.program
            )));
        }
        let answer = match patience {
            Some(limit) => tokio::time::timeout(limit, rx).await.map_err(|_| {
                ClientError::Process(format!(
                    "the server process {:?} did not answer within {limit:?}",
                    self.program
                ))
            })?,
            None => rx.await,
        };
        withdraw.open = false;
        answer.map_err(|_| self.exited())
    }

    /// Routes the notifications of subscription `id` to `to` until [`Self::unroute`].
    pub(crate) fn route(&self, id: i64, to: tokio::sync::mpsc::UnboundedSender<Value>) {
        lock(&self.streams).insert(id, to);
    }

    /// Stops routing subscription `id`.
    pub(crate) fn unroute(&self, id: i64) {
        lock(&self.streams).remove(&id);
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, body: &Value) -> Result<(), ClientError> {
        write(&self.input, body).await
    }

    fn exited(&self) -> ClientError {
        ClientError::Process(format!(
            "the server process {:?} closed its output (exited?) before answering",
            self.program
        ))
    }

    /// Ends the server as the stdio binding asks: close its input, wait, then terminate it.
    pub(crate) async fn close(&self, wait: Duration) {
        self.input.lock().await.take();
        let mut child = self.child.lock().await;
        if tokio::time::timeout(wait, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// Takes a request off the waiting map when its caller goes away, and tells
/// the server to stop working on it when it was still open.
struct Withdraw<'a> {
    transport: &'a StdioTransport,
    id: i64,
    open: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let waiting = lock(&self.transport.waiting)
            .as_mut()
            .and_then(|w| w.remove(&self.id))
            .is_some();
        if self.open && waiting {
            let cancel = json!(JsonRpcNotification::new(
                tessera_protocol::CANCELLED_NOTIFICATION,
                json!({"requestId": self.id, "reason": "the client gave up waiting"}),
            ));
            let input = Arc::clone(&self.transport.input);
            // Drop cannot wait: the notice is written by its own task.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { write(&input, &cancel).await });
            }
        }
    }
}

async fn write(input: &Input, body: &Value) -> Result<(), ClientError> {
    let mut line = serde_json::to_vec(body).unwrap_or_default();
    line.push(b'\n');
    let mut guard = input.lock().await;
    let stdin = guard
        .as_mut()
        .ok_or_else(|| ClientError::Process("the server's input is closed".into()))?;
    stdin
        .write_all(&line)
        .await
        .and(stdin.flush().await)
        .map_err(|e| ClientError::Process(format!("cannot write to the server process: {e}")))
}

/// Where the reader sends what the server writes.
struct Reader {
    waiting: Waiting,
    input: Input,
    streams: Streams,
    on_notification: Option<NotificationHandler>,
    on_push: PushHandler,
}

/// Routes every line the server writes: responses to their callers,
/// subscription notifications to their streams, other notifications to the
/// handler, pushed requests to the answerer.
async fn read_messages(stdout: ChildStdout, reader: Reader) {
    let Reader {
        waiting,
        input,
        streams,
        on_notification,
        on_push,
    } = reader;
    let mut lines = LineReader::new(stdout, MAX_LINE_BYTES);
    loop {
        let line = match lines.next().await {
            Ok(Line::Message(line)) => line,
            Ok(Line::TooLong) => {
                tracing::warn!("the server wrote a line over {MAX_LINE_BYTES} bytes; skipped");
                continue;
            }
            Ok(Line::End) | Err(_) => break,
        };
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            tracing::warn!(line = %String::from_utf8_lossy(&line).escape_debug(), "the server wrote a line that is not JSON; ignored");
            continue;
        };
        let id = message.get("id").filter(|id| !id.is_null());
        match (message.get("method").and_then(Value::as_str), id) {
            (None, Some(id)) => {
                let sender = id
                    .as_i64()
                    .and_then(|id| lock(&waiting).as_mut().and_then(|w| w.remove(&id)));
                match sender {
                    Some(tx) => {
                        let _ = tx.send(message);
                    }
                    None => tracing::warn!(%id, "a response to no request of ours; ignored"),
                }
            }
            (Some(method), Some(id)) => {
                let Some(id) = RequestId::from_value(id) else {
                    continue;
                };
                let (method, params) = (
                    method.to_owned(),
                    message.get("params").cloned().unwrap_or(json!({})),
                );
                let (on_push, input) = (Arc::clone(&on_push), Arc::clone(&input));
                // Answered aside: a human may take minutes, and responses keep flowing meanwhile.
                tokio::spawn(async move {
                    let answer = match on_push(method, params).await {
                        Ok(result) => json!(JsonRpcResultResponse::new(id, result)),
                        Err(error) => json!(JsonRpcErrorResponse::new(Some(id), error)),
                    };
                    let _ = write(&input, &answer).await;
                });
            }
            (Some(_), None) => {
                let stream = message
                    .get("params")
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(tessera_protocol::SUBSCRIPTION_ID_KEY))
                    .and_then(Value::as_i64)
                    .and_then(|id| lock(&streams).get(&id).cloned());
                match stream {
                    Some(to) => {
                        let _ = to.send(message);
                    }
                    None => {
                        if let Some(handler) = &on_notification {
                            handler(&message);
                        }
                    }
                }
            }
            (None, None) => {
                tracing::warn!(message = %message, "the server wrote a message that is neither a response, a request nor a notification");
            }
        }
    }
    // The output ended: every caller still waiting learns it now.
    lock(&waiting).take();
}
