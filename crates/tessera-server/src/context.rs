//! Everything a handler may know about the request it serves, and how it asks for more.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tessera_protocol::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitationSchema,
    Implementation, JsonObject, JsonRpcNotification, LOG_MESSAGE_NOTIFICATION, ListRootsResult,
    LoggingLevel, LoggingMessageParams, PROGRESS_NOTIFICATION, ProgressNotificationParams,
    RequestId, RequestMeta,
};

use crate::answer::Slot;
use crate::app_state::AppState;
use crate::form::{AskedForm, Form, schema_of};
use crate::question::Question;
use crate::{Era, HandlerError, Interrupt, RequestFacts};

/// The context of one request: who asks, what they can do, the answers they
/// gave so far, and the questions the handler asks next.
///
/// A handler runs again from the top on every round of a call. Each
/// [`ask`](Context::ask) yields the answer when the client gave one (in this
/// round or an earlier one: earlier answers travel sealed in the ticket), and
/// otherwise records the question and returns [`Interrupt::InputRequired`];
/// `?` ends the round and every question recorded goes to the client at once.
///
/// ```
/// use tessera_server::{Context, Form, Result};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Confirmation { confirm: bool }
/// impl Form for Confirmation { const KEY: &'static str = "confirmation"; }
///
/// async fn delete(ctx: Context, name: String) -> Result<String> {
///     let Confirmation { confirm } = ctx.ask(format!("Delete {name}?"))?;
///     Ok(if confirm { format!("Deleted {name}.") } else { "Kept.".into() })
/// }
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<Inner>,
}

/// The request as dispatch read it, shared by the handler's context.
pub(crate) struct Inner {
    pub(crate) id: RequestId,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: String,
    /// Boxed: the envelope is large and moves through several futures.
    pub(crate) meta: Box<RequestMeta>,
    pub(crate) facts: RequestFacts,
    pub(crate) app: Arc<AppState>,
    /// This round's answers, checked against what the ticket says was asked.
    pub(crate) answers: IndexMap<String, Slot>,
    /// Answers of earlier rounds, from the ticket (keys asked again are not here).
    pub(crate) earlier: IndexMap<String, Slot>,
    /// The state the previous round carried, unparsed.
    pub(crate) carried: Option<Value>,
    /// Whether the call may become, or already is, a task.
    pub(crate) task: TaskMode,
    pub(crate) next: Mutex<NextRound>,
}

/// Where a call stands with respect to the tasks extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskMode {
    /// It runs to its end in this request ([`Context::begin_task`] does nothing).
    Synchronous,
    /// A task-capable tool called by a client that declared the extension.
    MayStart,
    /// It is running as a task.
    Running,
}

/// What the handler leaves for the next round: its questions and the state to carry.
#[derive(Default)]
pub(crate) struct NextRound {
    pub(crate) questions: IndexMap<String, Question>,
    pub(crate) carry: Option<Value>,
    /// The questions are relayed ([`Context::relay_ask`]): answers are
    /// passed on as they come, so none is carried to later rounds.
    pub(crate) relayed: bool,
}

/// What a request that declares no capabilities can do.
pub(crate) static NO_CAPABILITIES: ClientCapabilities = ClientCapabilities {
    elicitation: None,
    sampling: None,
    roots: None,
    experimental: None,
    extensions: None,
};

impl Context {
    /// The context of request `incoming` about `target`, with the answers and
    /// carried state its ticket and retry brought.
    pub(crate) fn new(
        incoming: crate::incoming::Incoming,
        target: &str,
        app: &Arc<AppState>,
        answers: IndexMap<String, Slot>,
        earlier: IndexMap<String, Slot>,
        carried: Option<Value>,
        task: TaskMode,
    ) -> Self {
        let crate::incoming::Incoming {
            id, meta, facts, ..
        } = incoming;
        Self {
            inner: Arc::new(Inner {
                id,
                target: target.to_owned(),
                meta,
                facts,
                app: Arc::clone(app),
                answers,
                earlier,
                carried,
                task,
                next: Mutex::new(NextRound::default()),
            }),
        }
    }

    /// Marks where a long call's work begins: for a tool registered with
    /// [`ToolDef::task_support`](crate::ToolDef::task_support) and a client that
    /// declared the tasks extension on this request, the call ends here with a
    /// task (`resultType: "task"`) and the handler runs again from the top in
    /// the background, where this returns `Ok` and the client polls
    /// `tasks/get`. Otherwise (and inside the task) it returns `Ok` and the
    /// call goes on in this request. Questions asked before it are asked in
    /// the call's own rounds; questions after it, through `tasks/update`.
    ///
    /// ```
    /// use tessera_server::{Context, Result};
    ///
    /// async fn report(ctx: Context, _args: ()) -> Result<String> {
    ///     ctx.begin_task()?;
    ///     // ... minutes of work ...
    ///     Ok("report ready".into())
    /// }
    /// ```
    pub fn begin_task(&self) -> Result<(), Interrupt> {
        match self.inner.task {
            TaskMode::MayStart => Err(Interrupt::StartTask),
            TaskMode::Synchronous | TaskMode::Running => Ok(()),
        }
    }

    /// The answers the call has (earlier rounds' first, this round's over them)
    /// and the state it carries, once the handler is done with the context.
    pub(crate) fn into_answers(self) -> (IndexMap<String, Slot>, Option<Value>) {
        let (answers, earlier, carried) = match Arc::try_unwrap(self.inner) {
            Ok(inner) => (inner.answers, inner.earlier, inner.carried),
            // The handler kept a clone: copy what it still shares.
            Err(shared) => (
                shared.answers.clone(),
                shared.earlier.clone(),
                shared.carried.clone(),
            ),
        };
        (earlier.into_iter().chain(answers).collect(), carried)
    }

    /// Whether the handler runs as a task.
    pub fn in_task(&self) -> bool {
        self.inner.task == TaskMode::Running
    }

    /// Asks the user to fill in the form `T` with `message` above it; yields the
    /// answer once the client gave it. See [`Interrupt`] for the other outcomes.
    pub fn ask<T: Form>(&self, message: impl Into<String>) -> Result<T, Interrupt> {
        self.resolve(
            T::KEY,
            |slot| match slot {
                // The content was checked against the form derived from T; a
                // serde attribute the schema does not show can still refuse it.
                Slot::Accepted(content) => T::deserialize(content).map_err(|e| e.to_string()),
                _ => Err("the answer is not a form's content".into()),
            },
            || {
                let schema = schema_of::<T>().map_err(|e| Interrupt::UnusableForm {
                    key: T::KEY.to_owned(),
                    problem: e.to_string(),
                })?;
                let message = message.into();
                Ok(Question::Form(AskedForm { message, schema }))
            },
        )
    }

    /// Asks the user to fill in a form whose fields are known only at run
    /// time, under `key`; yields the accepted content, checked against
    /// `schema` like a [`Form`]'s. Prefer [`ask`](Self::ask) when the fields
    /// are known when the program is written.
    ///
    /// ```
    /// # fn handler(ctx: &tessera_server::Context) -> Result<(), tessera_server::Interrupt> {
    /// use std::sync::Arc;
    /// let schema = tessera_protocol::ElicitationSchema::from_value(&serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string", "default": "Lisbon"}},
    ///     "required": ["city"]
    /// })).expect("a form schema");
    /// let answer = ctx.ask_form("city", "Which city?", Arc::new(schema))?;
    /// assert!(answer["city"].is_string());
    /// # Ok(()) }
    /// ```
    pub fn ask_form(
        &self,
        key: &str,
        message: impl Into<String>,
        schema: Arc<ElicitationSchema>,
    ) -> Result<JsonObject, Interrupt> {
        self.resolve(
            key,
            |slot| match slot {
                Slot::Accepted(content) => Ok(content.clone()),
                _ => Err("the answer is not a form's content".into()),
            },
            || {
                Ok(Question::Form(AskedForm {
                    message: message.into(),
                    schema,
                }))
            },
        )
    }

    /// Asks the user to open `url` (URL-mode elicitation, e.g. to sign in elsewhere);
    /// yields once the user consented.
    pub fn ask_url(
        &self,
        key: &str,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<(), Interrupt> {
        self.resolve(
            key,
            |slot| match slot {
                Slot::Accepted(_) => Ok(()),
                _ => Err("the answer is not a URL consent".into()),
            },
            || {
                Ok(Question::Url {
                    message: message.into(),
                    url: url.into(),
                    elicitation_id: None,
                })
            },
        )
    }

    /// Asks the client's model for a completion under `key`; yields the model's answer.
    pub fn sample(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Interrupt> {
        self.resolve(
            key,
            |slot| match slot {
                Slot::Sampled(result) => Ok((**result).clone()),
                _ => Err("the answer is not a sampling result".into()),
            },
            || Ok(Question::Sample(Box::new(params))),
        )
    }

    /// Asks for the client's roots under `key`; yields them.
    pub fn list_roots(&self, key: &str) -> Result<ListRootsResult, Interrupt> {
        self.resolve(
            key,
            |slot| match slot {
                Slot::Roots(roots) => Ok(roots.clone()),
                _ => Err("the answer is not a roots list".into()),
            },
            || Ok(Question::Roots),
        )
    }

    /// Ends the round with only the carried state and no question: the client
    /// retries at once (for work that continues over several requests).
    pub fn come_back(&self) -> Interrupt {
        Interrupt::InputRequired
    }

    /// The state [`carry`](Context::carry) sealed into the previous round's
    /// ticket, typed; `None` on the first round (or when it does not fit `S`).
    pub fn carried<S: DeserializeOwned>(&self) -> Option<S> {
        let value = self.inner.carried.as_ref()?;
        S::deserialize(value)
            .inspect_err(
                |e| tracing::debug!(error = %e, "carried state does not fit the handler's type"),
            )
            .ok()
    }

    /// Seals `state` into the next ticket, for what answers cannot carry; the
    /// next round reads it with [`carried`](Context::carried).
    pub fn carry<S: Serialize>(&self, state: &S) -> Result<(), HandlerError> {
        let value = serde_json::to_value(state)?;
        self.next().carry = Some(value);
        Ok(())
    }

    /// The application state of type `T` the server was built with
    /// ([`with_state`](crate::McpServerBuilder::with_state)).
    pub fn app_state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.app.get::<T>()
    }

    /// What the request names: the tool or prompt name, or the resource URI
    /// read (for a template, the URI as the client gave it).
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// The id of this JSON-RPC request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// What the caller's verified access token says (subject, scopes, client), when OAuth protects the server.
    pub fn auth(&self) -> Option<&crate::AuthInfo> {
        self.inner.facts.auth.as_deref()
    }

    /// Whom per-caller limits count against: the principal, else the
    /// client's network address as the transport (or a trusted proxy)
    /// reports it; `None` over stdio.
    pub fn caller(&self) -> Option<String> {
        self.inner.facts.caller_key()
    }

    /// The authenticated principal, if the transport established one.
    pub fn principal(&self) -> Option<&str> {
        self.inner.facts.principal.as_deref()
    }

    /// The client's self-description (unverified; for display and logs).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// The client's capabilities for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.inner
            .meta
            .client_capabilities
            .as_ref()
            .unwrap_or(&NO_CAPABILITIES)
    }

    /// The request's `_meta` envelope.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The era of the client.
    pub fn era(&self) -> &Era {
        &self.inner.facts.era
    }

    /// Reports progress, if the request asked for it (`_meta.progressToken`).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(sink)) = (
            &self.inner.meta.progress_token,
            &self.inner.facts.notifications,
        ) else {
            return;
        };
        let params = ProgressNotificationParams::new(
            token.clone(),
            progress,
            total,
            message.map(str::to_owned),
        );
        sink.send(json!(JsonRpcNotification::new(
            PROGRESS_NOTIFICATION,
            params
        )));
    }

    /// Sends a log message, if the request opted in (`_meta` logLevel) at or below `level`.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let (Some(wanted), Some(sink)) =
            (self.inner.meta.log_level, &self.inner.facts.notifications)
        else {
            return;
        };
        if level < wanted {
            return;
        }
        let params = LoggingMessageParams {
            level,
            logger: logger.map(str::to_owned),
            data,
            meta: None,
        };
        sink.send(json!(JsonRpcNotification::new(
            LOG_MESSAGE_NOTIFICATION,
            params
        )));
    }

    /// The answer under `key`: this round's first, else an earlier round's.
    fn answer(&self, key: &str) -> Option<&Slot> {
        self.inner
            .answers
            .get(key)
            .or_else(|| self.inner.earlier.get(key))
    }

    /// The answer under `key` as `accept` reads it; when there is none, or it
    /// does not fit, the question is recorded (again) for the next round.
    fn resolve<T>(
        &self,
        key: &str,
        accept: impl FnOnce(&Slot) -> Result<T, String>,
        question: impl FnOnce() -> Result<Question, Interrupt>,
    ) -> Result<T, Interrupt> {
        let invalid = match self.answer(key) {
            None => None,
            Some(Slot::Declined) => {
                return Err(Interrupt::Declined {
                    key: key.to_owned(),
                });
            }
            Some(Slot::Cancelled) => {
                return Err(Interrupt::Cancelled {
                    key: key.to_owned(),
                });
            }
            Some(Slot::Invalid(reason)) => Some(reason.clone()),
            Some(slot) => match accept(slot) {
                Ok(answer) => return Ok(answer),
                Err(reason) => Some(reason),
            },
        };
        let mut question = question()?;
        if let Some(reason) = &invalid {
            question.explain_invalid(reason);
        }
        self.next().questions.insert(key.to_owned(), question);
        Err(match invalid {
            None => Interrupt::InputRequired,
            Some(reason) => Interrupt::Invalid {
                key: key.to_owned(),
                reason,
            },
        })
    }

    pub(crate) fn next(&self) -> MutexGuard<'_, NextRound> {
        // Nothing panics while holding the lock; a poisoned one is still consistent.
        self.inner
            .next
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what the handler left for the next round.
    pub(crate) fn take_next(&self) -> NextRound {
        std::mem::take(&mut *self.next())
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.inner.id)
            .field("target", &self.inner.target)
            .field("answers", &self.inner.answers.keys().collect::<Vec<_>>())
            .field("earlier", &self.inner.earlier.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
