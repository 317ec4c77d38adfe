//! Tasks every isolate can answer: the task store in a Durable Object.
//!
//! One object (named after the store, `tasks` by default) keeps all of a
//! Worker's tasks in its SQLite storage, so the quotas hold across isolates
//! and locations, and tasks outlive the isolate that started them. Each
//! store step is one request to the object, which runs it without awaiting
//! anything in between: a Durable Object handles such a step whole before
//! the next, so steps are atomic. The object cannot reach a runner to wake
//! it, so a runner's [`changed`](TaskStore::changed) asks it every
//! [`WAKE_POLL`] whether the task wants its runner.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tessera_protocol::{BoxFuture, InputRequests, JsonObject, TaskStatus};
use tessera_server::task_store::{TaskStoreFuture, kept_outcome};
use tessera_server::{NewTask, TaskOutcome, TaskPolicy, TaskRecord, TaskStore, TaskStoreError};
use worker::send::{SendFuture, SendWrapper};
use worker::{Method, ObjectNamespace, Request, RequestInit};

/// The binding name the Worker looks for (`durable_objects.bindings[].name`).
pub const TASK_STORE_BINDING: &str = "TASK_STORE";

/// The largest result or error a task keeps on Workers, in bytes of JSON: a
/// row of a Durable Object's SQLite storage holds at most 2 MB, and the
/// task's questions and answers share it.
pub const MAX_WORKER_RESULT_BYTES: usize = 1024 * 1024;

/// How often a waiting runner asks the object whether its task changed:
/// each ask is a subrequest of the request that started the task.
pub const WAKE_POLL: Duration = Duration::from_millis(500);

/// A [`TaskStore`] backed by one [`TaskStoreObject`](crate::TaskStoreObject):
/// bind the class as `TASK_STORE` and [`WorkerSetup::task_store`](crate::WorkerSetup::task_store)
/// holds one. When the object cannot be reached, task requests are
/// answered 503.
pub struct DurableObjectTaskStore {
    namespace: SendWrapper<ObjectNamespace>,
    name: String,
    policy: TaskPolicy,
}

/// One store step, as the object receives it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub(crate) enum Step {
    Create {
        id: String,
        new: NewTask,
    },
    Get {
        id: String,
        principal: Option<String>,
    },
    Ask {
        id: String,
        questions: InputRequests,
    },
    Answer {
        id: String,
        principal: Option<String>,
        responses: JsonObject,
    },
    Take {
        id: String,
    },
    Finish {
        id: String,
        outcome: TaskOutcome,
        bytes: usize,
    },
    Cancel {
        id: String,
        principal: Option<String>,
    },
    Renew {
        id: String,
    },
    WantsRunner {
        id: String,
    },
}

/// A step with the policy it runs under.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Call {
    pub(crate) policy: TaskPolicy,
    #[serde(flatten)]
    pub(crate) step: Step,
}

/// What the object answers `create`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Created {
    Task(Box<TaskRecord>),
    CallerFull,
    Full,
}

impl DurableObjectTaskStore {
    /// A store named `name` (one object holds it) in `namespace`, keeping
    /// tasks under `policy` with results of at most
    /// [`MAX_WORKER_RESULT_BYTES`].
    pub fn new(namespace: ObjectNamespace, name: &str, mut policy: TaskPolicy) -> Self {
        policy.max_result_bytes = policy.max_result_bytes.min(MAX_WORKER_RESULT_BYTES);
        Self {
            namespace: SendWrapper::new(namespace),
            name: name.to_owned(),
            policy,
        }
    }

    /// Runs `step` in the object: its answer.
    fn run<T: DeserializeOwned + 'static>(&self, step: Step) -> TaskStoreFuture<'static, T> {
        let call = Call {
            policy: self.policy.clone(),
            step,
        };
        let namespace = self.namespace.clone();
        let name = self.name.clone();
        // The Workers runtime is single-threaded; its JS futures are not `Send`.
        Box::pin(SendFuture::new(async move {
            run_in(&namespace, &name, &call)
                .await
                .map_err(|e| TaskStoreError::Unavailable(format!("the task store object: {e}")))
        }))
    }
}

async fn run_in<T: DeserializeOwned>(
    namespace: &ObjectNamespace,
    name: &str,
    call: &Call,
) -> Result<T, String> {
    let body = serde_json::to_string(call).map_err(|e| e.to_string())?;
    let stub = namespace
        .id_from_name(name)
        .and_then(|id| id.get_stub())
        .map_err(|e| e.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(worker::wasm_bindgen::JsValue::from_str(&body)));
    let request =
        Request::new_with_init("https://task-store/step", &init).map_err(|e| e.to_string())?;
    let mut response = stub
        .fetch_with_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let text = response.text().await.map_err(|e| e.to_string())?;
    if response.status_code() != 200 {
        return Err(format!("HTTP {}: {text}", response.status_code()));
    }
    serde_json::from_str(&text).map_err(|e| format!("an answer that is not the step's: {e}"))
}

impl TaskStore for DurableObjectTaskStore {
    fn policy(&self) -> &TaskPolicy {
        &self.policy
    }

    fn create(&self, new: NewTask) -> TaskStoreFuture<'_, TaskRecord> {
        let Some(id) = tessera_state::random_id() else {
            return Box::pin(std::future::ready(Err(TaskStoreError::Unavailable(
                "no randomness for a task id".into(),
            ))));
        };
        let created = self.run::<Created>(Step::Create { id, new });
        let policy = &self.policy;
        Box::pin(async move {
            match created.await? {
                Created::Task(record) => Ok(*record),
                Created::CallerFull => Err(TaskStoreError::CallerFull(policy.max_live_per_caller)),
                Created::Full => Err(TaskStoreError::Full),
            }
        })
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> TaskStoreFuture<'a, Option<TaskRecord>> {
        self.run(Step::Get {
            id: id.to_owned(),
            principal: principal.map(str::to_owned),
        })
    }

    fn ask<'a>(&'a self, id: &'a str, questions: InputRequests) -> TaskStoreFuture<'a, ()> {
        self.run(Step::Ask {
            id: id.to_owned(),
            questions,
        })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
        responses: JsonObject,
    ) -> TaskStoreFuture<'a, bool> {
        self.run(Step::Answer {
            id: id.to_owned(),
            principal: principal.map(str::to_owned),
            responses,
        })
    }

    fn take_answers<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<JsonObject>> {
        self.run(Step::Take { id: id.to_owned() })
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> TaskStoreFuture<'a, ()> {
        // Sized here, so an outcome too large to keep is never sent.
        let (outcome, bytes) = kept_outcome(outcome, &self.policy);
        self.run(Step::Finish {
            id: id.to_owned(),
            outcome,
            bytes,
        })
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: Option<&'a str>) -> TaskStoreFuture<'a, bool> {
        self.run(Step::Cancel {
            id: id.to_owned(),
            principal: principal.map(str::to_owned),
        })
    }

    fn renew<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<TaskStatus>> {
        self.run(Step::Renew { id: id.to_owned() })
    }

    fn changed(&self, id: &str) -> BoxFuture<'static, ()> {
        let id = id.to_owned();
        let namespace = self.namespace.clone();
        let name = self.name.clone();
        let policy = self.policy.clone();
        Box::pin(SendFuture::new(async move {
            let call = Call {
                policy,
                step: Step::WantsRunner { id },
            };
            loop {
                worker::Delay::from(WAKE_POLL).await;
                // An object that does not answer is asked again: the
                // runner's own look every lease renewal still goes on.
                if let Ok(true) = run_in::<bool>(&namespace, &name, &call).await {
                    return;
                }
            }
        }))
    }
}
