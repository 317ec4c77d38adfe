//! An in-process client for tests (feature `testing`): a server value, no
//! sockets, no transport.
//!
//! [`TestClient`] sends each request straight to [`McpServer::handle`] with
//! the 2026-07-28 `_meta` a client puts on it, and plays the client's part
//! of every multi round-trip flow: when a round answers `input_required`, it
//! answers each question from the call's script ([`Answer`]: accept with
//! content, decline, cancel, or a raw response) and retries with a new id,
//! the same arguments, the answers and the ticket echoed, until the result
//! is complete. The [`Finished`] call keeps the result and every round's
//! questions.
//!
//! ```
//! # tokio_test_block_on(async {
//! use tessera_server::testing::TestClient;
//! use tessera_server::{Context, Form, McpServer, McpServerBuilder, ToolDef};
//!
//! #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
//! struct Name { name: String }
//! impl Form for Name { const KEY: &'static str = "name"; }
//!
//! /// The server, registered once: `main` passes launch's `setup.server(..)`,
//! /// tests pass `McpServer::builder(..)`.
//! fn greeter(builder: McpServerBuilder) -> McpServerBuilder {
//!     builder.tool(
//!         ToolDef::new("greet", |ctx: Context, _: ()| async move {
//!             let Name { name } = ctx.ask("Who are you?")?;
//!             Ok::<_, tessera_server::HandlerError>(format!("Hello, {name}!"))
//!         })
//!         .asks(),
//!     )
//! }
//!
//! // `build` adds a ticket codec with a fresh key when the builder has none.
//! let client = TestClient::build(greeter(McpServer::builder("greeter", "1.0.0"))).unwrap();
//! let done = client
//!     .call("greet", ())
//!     .accept(Name { name: "Ada".into() })
//!     .run()
//!     .await
//!     .unwrap();
//! assert_eq!(done.text(), "Hello, Ada!");
//! assert_eq!(done.rounds(), 2);
//! assert_eq!(done.question(1, Name::KEY), Some("Who are you?"));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! A ticket the client changed is refused before any handler runs; a test
//! says so with [`TestClient::request`]:
//!
//! ```
//! # tokio_test_block_on(async {
//! # use tessera_server::testing::TestClient;
//! # use tessera_server::{Context, Form, McpServer, ToolDef};
//! # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
//! # struct Name { name: String }
//! # impl Form for Name { const KEY: &'static str = "name"; }
//! # let server = McpServer::builder("greeter", "1.0.0").tool(ToolDef::new("greet", |ctx: Context, _: ()| async move {
//! #     let Name { name } = ctx.ask("Who are you?")?;
//! #     Ok::<_, tessera_server::HandlerError>(format!("Hello, {name}!"))
//! # }).asks());
//! let client = TestClient::build(server).unwrap();
//! let first = client.request("tools/call", serde_json::json!({"name": "greet", "arguments": {}})).await.unwrap();
//! let mut ticket = first["requestState"].as_str().unwrap().to_owned();
//! ticket.replace_range(10..11, if &ticket[10..11] == "A" { "B" } else { "A" });
//! let err = client
//!     .request("tools/call", serde_json::json!({
//!         "name": "greet",
//!         "arguments": {},
//!         "requestState": ticket,
//!         "inputResponses": {"name": {"action": "accept", "content": {"name": "Eve"}}},
//!     }))
//!     .await
//!     .unwrap_err();
//! assert_eq!(err.code, -32602);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

mod task_store;

pub use task_store::check_task_store;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Map, Value, json};
use tessera_protocol::rounds::{RoundDriver, Step, TooManyRounds, reply_of};
use tessera_protocol::{
    CallToolResult, ClientCapabilities, ElicitResult, ErrorObject, GetPromptResult, InputRequests,
    JsonRpcRequest, LATEST_PROTOCOL_VERSION, Prompt, ReadResourceResult, RequestId, Resource, Tool,
};

use crate::{AuthInfo, BuildError, Form, McpServer, McpServerBuilder, RequestFacts};

/// The most rounds a call may take before the kit gives up (a tool that asks forever).
pub const DEFAULT_MAX_ROUNDS: usize = 10;

/// A client over a server value, for tests: lists, calls and reads, answering
/// each round's questions from a script.
pub struct TestClient {
    server: Arc<McpServer>,
    next_id: AtomicI64,
    capabilities: ClientCapabilities,
    auth: Option<AuthInfo>,
    max_rounds: usize,
}

/// One prepared answer to a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Accept, with this content (an object of the form's fields).
    Accept(Value),
    /// Decline.
    Decline,
    /// Cancel (dismissed without a choice).
    Cancel,
    /// This response as it is: a sampling or roots result, or anything a test
    /// wants the server to receive.
    Raw(Value),
}

impl Answer {
    /// Accept with `content`, e.g. `json!({"amount": 5})`.
    pub fn accept(content: Value) -> Self {
        Self::Accept(content)
    }

    /// The response the server receives under the question's key.
    fn into_response(self) -> Value {
        let result = match self {
            Self::Accept(Value::Object(content)) => ElicitResult::accept(content),
            Self::Accept(other) => return json!({"action": "accept", "content": other}),
            Self::Decline => ElicitResult::decline(),
            Self::Cancel => ElicitResult::cancel(),
            Self::Raw(value) => return value,
        };
        serde_json::to_value(result).unwrap_or(Value::Null)
    }
}

/// Why a test call did not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TestError {
    /// The server answered with a JSON-RPC error.
    #[error("{method} failed: {} ({})", .error.message, .error.code)]
    Rpc {
        /// The method called.
        method: String,
        /// The error the server sent.
        error: ErrorObject,
        /// The rounds before it (each round's questions).
        rounds: Vec<InputRequests>,
    },
    /// The server asked a question the script has no (more) answers for.
    #[error("round {round} asked {key:?} ({question:?}) and the script has no answer left for it")]
    Unanswered {
        /// The round that asked (1 is the first request).
        round: usize,
        /// The question's key.
        key: String,
        /// What it asked (the message a person would read).
        question: String,
    },
    /// The call still asked for input after this many rounds.
    #[error("still asking after {rounds} rounds (last asked: {last:?})")]
    TooManyRounds {
        /// How many rounds ran.
        rounds: usize,
        /// The keys asked in the last round.
        last: Vec<String>,
    },
    /// The server's result does not parse as the method's result.
    #[error("{method}: unexpected result: {problem}")]
    Result {
        /// The method called.
        method: String,
        /// What did not parse.
        problem: String,
    },
}

/// A flow that completed: its result, and each round's questions.
#[derive(Debug, Clone)]
pub struct Finished<R> {
    /// The complete result.
    pub result: R,
    /// The questions of each round that asked (empty when the first round completed).
    pub asked: Vec<InputRequests>,
}

impl<R> Finished<R> {
    /// How many requests the flow took (rounds that asked, plus the last).
    pub fn rounds(&self) -> usize {
        self.asked.len() + 1
    }

    /// The message of the question asked under `key` in `round` (1-based), if a form or URL asked it.
    pub fn question(&self, round: usize, key: &str) -> Option<&str> {
        self.asked.get(round.checked_sub(1)?)?.get(key)?.message()
    }
}

impl Finished<CallToolResult> {
    /// The text blocks of the result, joined by newlines.
    pub fn text(&self) -> String {
        let texts = self.result.content.iter().filter_map(|b| b.as_text());
        texts.collect::<Vec<_>>().join("\n")
    }

    /// Whether the tool reported an error (`isError`).
    pub fn is_error(&self) -> bool {
        self.result.is_error == Some(true)
    }
}

impl Finished<GetPromptResult> {
    /// The text of the prompt's messages, joined by newlines.
    pub fn text(&self) -> String {
        let texts = self
            .result
            .messages
            .iter()
            .filter_map(|m| m.content.as_text());
        texts.collect::<Vec<_>>().join("\n")
    }
}

impl Finished<ReadResourceResult> {
    /// The text contents of the resource, joined by newlines (blobs left out).
    pub fn text(&self) -> String {
        let texts = self.result.contents.iter().filter_map(|c| match c {
            tessera_protocol::ResourceContents::Text(t) => Some(t.text.as_str()),
            tessera_protocol::ResourceContents::Blob(_) => None,
        });
        texts.collect::<Vec<_>>().join("\n")
    }
}

/// A call being scripted: add answers, then [`run`](Self::run) it.
#[must_use = "a call does nothing until it is run"]
pub struct Call<'a, R> {
    client: &'a TestClient,
    method: &'static str,
    params: Map<String, Value>,
    answers: HashMap<String, VecDeque<Answer>>,
    _result: std::marker::PhantomData<fn() -> R>,
}

impl<R: serde::de::DeserializeOwned> Call<'_, R> {
    /// The next answer to the question under `key`: answers to one key are
    /// used in order, one each time it is asked (an invalid answer, then a
    /// valid one, tests the question asked again).
    pub fn answer(mut self, key: &str, answer: Answer) -> Self {
        self.answers
            .entry(key.to_owned())
            .or_default()
            .push_back(answer);
        self
    }

    /// The next answer to the form `F`'s question: accepted with `form` as
    /// its content (keyed by [`Form::KEY`]).
    pub fn accept<F: Form + serde::Serialize>(self, form: F) -> Self {
        let content = serde_json::to_value(form).unwrap_or(Value::Null);
        self.answer(F::KEY, Answer::Accept(content))
    }

    /// The next answer to the form `F`'s question: declined.
    pub fn decline<F: Form>(self) -> Self {
        self.answer(F::KEY, Answer::Decline)
    }

    /// The next answer to the form `F`'s question: cancelled (dismissed).
    pub fn cancel<F: Form>(self) -> Self {
        self.answer(F::KEY, Answer::Cancel)
    }

    /// Runs the flow to its complete result, on the shared round driver.
    pub async fn run(mut self) -> Result<Finished<R>, TestError> {
        let method = self.method;
        let unreadable = |problem: String| TestError::Result {
            method: method.to_owned(),
            problem,
        };
        let mut driver = RoundDriver::<String>::new(self.client.max_rounds);
        loop {
            let mut params = self.params.clone();
            let retry = driver.next_request().map_err(too_many)?;
            retry.add_to(&mut params);
            let value =
                (self.client.request(method, params).await).map_err(|error| TestError::Rpc {
                    method: method.to_owned(),
                    error,
                    rounds: driver.asked().to_vec(),
                })?;
            let reply = reply_of(value).map_err(|e| unreadable(e.0))?;
            let questions = match driver.receive(reply).map_err(too_many)? {
                Step::Done(value) | Step::Task(value) => {
                    let result =
                        serde_json::from_value(value).map_err(|e| unreadable(e.to_string()))?;
                    return Ok(Finished {
                        result,
                        asked: driver.into_asked(),
                    });
                }
                // The kit does not wait: a test's server that only carries state is retried at once.
                Step::Pause(_) => continue,
                Step::Ask(questions) => questions,
            };
            let mut responses = Map::new();
            for (key, question) in &questions {
                let answer = self
                    .answers
                    .get_mut(key)
                    .and_then(VecDeque::pop_front)
                    .ok_or_else(|| TestError::Unanswered {
                        round: driver.rounds(),
                        key: key.clone(),
                        question: question.message().unwrap_or(question.method()).to_owned(),
                    })?;
                responses.insert(key.clone(), answer.into_response());
            }
            driver.answer(responses);
        }
    }
}

/// The round limit reached: how many rounds ran, and what the last asked.
fn too_many(e: TooManyRounds) -> TestError {
    TestError::TooManyRounds {
        rounds: e.rounds,
        last: e.last.keys().cloned().collect(),
    }
}

impl TestClient {
    /// A client of the server `builder` builds, that can answer forms and
    /// URL questions. When the builder has no ticket codec, one with a fresh
    /// random key is added first, so a test needs no key setup.
    pub fn build(builder: McpServerBuilder) -> Result<Self, BuildError> {
        let builder = if builder.has_request_state() {
            builder
        } else {
            let key = tessera_state::StateKey::generate()
                .map_err(|e| BuildError(format!("no key for the test codec: {e}")))?;
            let ring = tessera_state::KeyRing::new("test", key)
                .map_err(|e| BuildError(format!("no key ring for the test codec: {e}")))?;
            builder.request_state(tessera_state::RequestStateCodec::new(ring))
        };
        Ok(Self::new(builder.build()?))
    }

    /// A client of `server` that can answer forms and URL questions.
    pub fn new(server: impl Into<Arc<McpServer>>) -> Self {
        Self {
            server: server.into(),
            next_id: AtomicI64::new(1),
            capabilities: serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}}))
                .unwrap_or_default(),
            auth: None,
            max_rounds: DEFAULT_MAX_ROUNDS,
        }
    }

    /// The capabilities every request declares (default: elicitation, forms and URLs).
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Requests come from this verified token's principal, with its scopes
    /// (as an OAuth-protected endpoint would hand them on).
    pub fn auth(mut self, auth: AuthInfo) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The most rounds a call may take (default [`DEFAULT_MAX_ROUNDS`]).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The server's tools (every page).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ErrorObject> {
        self.list("tools/list", "tools").await
    }

    /// The server's prompts (every page).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ErrorObject> {
        self.list("prompts/list", "prompts").await
    }

    /// The server's resources (every page).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ErrorObject> {
        self.list("resources/list", "resources").await
    }

    /// A call of the tool `name` with `arguments` (a typed arguments value,
    /// `json!({..})`, or `()` for none); script its answers, then run it.
    pub fn call(&self, name: &str, arguments: impl serde::Serialize) -> Call<'_, CallToolResult> {
        self.flow(
            "tools/call",
            json!({"name": name, "arguments": object_of(arguments)}),
        )
    }

    /// Getting the prompt `name` with `arguments` (strings; typed, `json!({..})` or `()`).
    pub fn get_prompt(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Call<'_, GetPromptResult> {
        self.flow(
            "prompts/get",
            json!({"name": name, "arguments": object_of(arguments)}),
        )
    }

    /// Reading the resource at `uri`.
    pub fn read_resource(&self, uri: &str) -> Call<'_, ReadResourceResult> {
        self.flow("resources/read", json!({"uri": uri}))
    }

    /// One request of `method` with `params` (an object: `json!({..})` or a
    /// typed params value; the kit adds `_meta`): the raw result, or the
    /// error the server answered with.
    pub async fn request(
        &self,
        method: &str,
        params: impl serde::Serialize,
    ) -> Result<Value, ErrorObject> {
        let mut params = match serde_json::to_value(params) {
            Ok(Value::Object(params)) => params,
            Ok(Value::Null) => Map::new(),
            Ok(other) => {
                return Err(ErrorObject::new(
                    tessera_protocol::INVALID_PARAMS,
                    format!("{method}: params must be a JSON object, not {other}"),
                ));
            }
            Err(e) => {
                return Err(ErrorObject::new(
                    tessera_protocol::INVALID_PARAMS,
                    e.to_string(),
                ));
            }
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.entry("io.modelcontextprotocol/protocolVersion")
                .or_insert_with(|| json!(LATEST_PROTOCOL_VERSION));
            meta.entry("io.modelcontextprotocol/clientInfo")
                .or_insert_with(
                    || json!({"name": "tessera-test-client", "version": env!("CARGO_PKG_VERSION")}),
                );
            meta.entry("io.modelcontextprotocol/clientCapabilities")
                .or_insert_with(|| json!(self.capabilities));
        }
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed).into());
        let request = JsonRpcRequest::new(id, method, Some(Value::Object(params)));
        let mut facts = RequestFacts::modern();
        if let Some(auth) = &self.auth {
            facts = facts.with_auth(auth.clone());
        }
        let handled = self.server.handle(request, facts).await;
        match handled.result {
            Ok(raw) => serde_json::from_str(raw.get())
                .map_err(|e| ErrorObject::new(tessera_protocol::INTERNAL_ERROR, e.to_string())),
            Err(error) => Err(error.to_error_object()),
        }
    }

    fn flow<R>(&self, method: &'static str, params: Value) -> Call<'_, R> {
        let Value::Object(params) = params else {
            unreachable!("built as an object")
        };
        Call {
            client: self,
            method,
            params,
            answers: HashMap::new(),
            _result: std::marker::PhantomData,
        }
    }

    async fn list<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
    ) -> Result<Vec<T>, ErrorObject> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), c);
            }
            let page = self.request(method, params).await?;
            let listed: Vec<T> = page
                .get(field)
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| ErrorObject::new(tessera_protocol::INTERNAL_ERROR, e.to_string()))?
                .unwrap_or_default();
            items.extend(listed);
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => {
                    // A server that hands out a cursor twice would be listed forever.
                    if !seen.insert(next.to_string()) {
                        return Err(ErrorObject::new(
                            tessera_protocol::INTERNAL_ERROR,
                            format!("{method}: the server returned the cursor {next} twice"),
                        ));
                    }
                    cursor = Some(next.clone());
                }
                _ => return Ok(items),
            }
        }
    }
}

/// Arguments as the object a request carries (`()` and `None` are none).
fn object_of(arguments: impl serde::Serialize) -> Value {
    match serde_json::to_value(arguments) {
        Ok(Value::Null) | Err(_) => Value::Object(Map::new()),
        Ok(other) => other,
    }
}
