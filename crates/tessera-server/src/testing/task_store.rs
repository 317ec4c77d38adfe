//! The contract every [`TaskStore`] keeps, as one test every implementation
//! runs: [`check_task_store`].

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use serde_json::json;
use tessera_protocol::{ErrorObject, InputRequest, InputRequests, JsonObject, TaskStatus};

use crate::TaskRuntime;
use crate::task_store::{NewTask, TaskOutcome, TaskPolicy, TaskStore, TaskStoreError};

/// Checks that `make` builds stores keeping the [`TaskStore`] contract:
/// tasks seen only by their principal; questions, answers (taken once)
/// and the runner woken; results and errors kept once; cancellation waking
/// the runner; the quotas of [`TaskPolicy::small`] (live and kept tasks
/// per caller and in all, bytes of results per caller and in all); a runner
/// that stops renewing its lease failing its task; expiry after the TTL.
///
/// `make` is called with the policy each check needs and must give a store
/// no other check uses (for a shared backend, a fresh namespace); `runtime`
/// sleeps between steps. Panics, naming the broken rule, at the first
/// violation.
///
/// ```
/// # tokio_test_block_on(async {
/// use tessera_server::MemoryTaskStore;
/// use tessera_server::testing::check_task_store;
/// # struct Tokio;
/// # impl tessera_server::TaskRuntime for Tokio {
/// #     fn spawn(&self, work: tessera_server::BoxFuture<'static, ()>) { tokio::spawn(work); }
/// #     fn sleep(&self, d: std::time::Duration) -> tessera_server::BoxFuture<'static, ()> { Box::pin(tokio::time::sleep(d)) }
/// # }
/// check_task_store(|policy| async move { MemoryTaskStore::new(policy) }, &Tokio).await;
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
/// # }
/// ```
pub async fn check_task_store<S, F, Fut>(mut make: F, runtime: &dyn TaskRuntime)
where
    S: TaskStore,
    F: FnMut(TaskPolicy) -> Fut,
    Fut: Future<Output = S>,
{
    visibility(&make(TaskPolicy::small()).await).await;
    questions_and_answers(&make(TaskPolicy::small()).await, runtime).await;
    endings(&make(TaskPolicy::small()).await).await;
    cancellation(&make(TaskPolicy::small()).await, runtime).await;
    task_quotas(&make(TaskPolicy::small()).await).await;
    byte_quotas(&make(TaskPolicy::small()).await).await;
    abandoned_runner(&make(TaskPolicy::small()).await, runtime).await;
    expiry(
        &make(TaskPolicy::small().with_ttl(Duration::from_millis(300))).await,
        runtime,
    )
    .await;
}

/// The span context a task's starting request had.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn owner(name: &str) -> NewTask {
    NewTask {
        principal: Some(name.to_owned()),
        caller: Some(format!("principal {name}")),
        trace: Some(TRACE.to_owned()),
    }
}

fn question(message: &str) -> InputRequest {
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": {"type": "object", "properties": {}}}
    }))
    .expect("an elicitation input request")
}

fn questions(keys: &[&str]) -> InputRequests {
    keys.iter()
        .map(|k| ((*k).to_owned(), question(k)))
        .collect()
}

fn answers(pairs: &[(&str, serde_json::Value)]) -> JsonObject {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn ok<T>(what: &str, result: Result<T, TaskStoreError>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: the store failed: {e}"))
}

/// Whether `wake` completes within `within` (`runtime` keeps time).
async fn wakes_within(
    wake: crate::BoxFuture<'static, ()>,
    within: Duration,
    runtime: &dyn TaskRuntime,
) -> bool {
    let mut wake = pin!(wake);
    let mut timer = pin!(runtime.sleep(within));
    std::future::poll_fn(|cx| {
        if wake.as_mut().poll(cx).is_ready() {
            return Poll::Ready(true);
        }
        timer.as_mut().poll(cx).map(|()| false)
    })
    .await
}

async fn status(store: &impl TaskStore, id: &str, principal: &str) -> TaskStatus {
    ok("get", store.get(id, Some(principal)).await)
        .unwrap_or_else(|| panic!("task {id} is gone"))
        .status
}

async fn visibility(store: &impl TaskStore) {
    let task = ok("create", store.create(owner("alice")).await);
    assert_eq!(task.id.len(), 32, "a task id is 32 hex digits");
    assert!(task.id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(task.status, TaskStatus::Working, "a new task is working");
    let seen = ok("get", store.get(&task.id, Some("alice")).await);
    assert_eq!(
        seen.as_ref().map(|t| &t.id),
        Some(&task.id),
        "its principal sees it"
    );
    let view = seen.unwrap().view(store.policy());
    assert_eq!(view.ttl_ms, Some(store.policy().ttl.as_millis() as u64));
    assert_eq!(
        view.poll_interval_ms,
        Some(store.policy().poll_interval.as_millis() as u64)
    );
    assert!(
        ok("get", store.get(&task.id, Some("bob")).await).is_none(),
        "another principal does not see it"
    );
    assert!(
        ok("get", store.get(&task.id, None).await).is_none(),
        "an anonymous caller does not see a principal's task"
    );
    assert!(
        !ok(
            "answer",
            store.answer(&task.id, Some("bob"), JsonObject::new()).await
        ),
        "another principal cannot answer it"
    );
    assert!(
        !ok("cancel", store.cancel(&task.id, Some("bob")).await),
        "another principal cannot cancel it"
    );
    assert_eq!(status(store, &task.id, "alice").await, TaskStatus::Working);
    let kept = ok("get", store.get(&task.id, Some("alice")).await);
    assert_eq!(
        kept.and_then(|t| t.trace).as_deref(),
        Some(TRACE),
        "the starting request's span context is kept with the task"
    );
    let anonymous = ok(
        "create",
        store
            .create(NewTask {
                principal: None,
                caller: None,
                trace: None,
            })
            .await,
    );
    assert!(ok("get", store.get(&anonymous.id, None).await).is_some());
    assert!(
        ok(
            "get",
            store.get("0123456789abcdef0123456789abcdef", None).await
        )
        .is_none(),
        "an unknown id is not found"
    );
}

async fn questions_and_answers(store: &impl TaskStore, runtime: &dyn TaskRuntime) {
    let id = ok("create", store.create(owner("alice")).await).id;
    assert!(
        ok("take", store.take_answers(&id).await).is_none(),
        "nothing to take before a question"
    );
    ok(
        "ask",
        store.ask(&id, questions(&["amount", "confirm"])).await,
    );
    let asked = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(asked.status, TaskStatus::InputRequired);
    let view = asked.view(store.policy());
    let requests = view
        .input_requests
        .expect("input_required shows its requests");
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["amount", "confirm"],
        "the requests keep their order"
    );
    assert_eq!(requests["amount"], question("amount"));

    let wake = store.changed(&id);
    assert!(ok(
        "answer",
        store
            .answer(
                &id,
                Some("alice"),
                answers(&[
                    (
                        "amount",
                        json!({"action": "accept", "content": {"amount": 5}})
                    ),
                    ("stray", json!(1))
                ])
            )
            .await
    ));
    assert_eq!(
        status(store, &id, "alice").await,
        TaskStatus::InputRequired,
        "one question is still outstanding"
    );
    assert!(ok("take", store.take_answers(&id).await).is_none());
    let partly = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(
        partly
            .view(store.policy())
            .input_requests
            .map(|r| r.into_keys().collect::<Vec<_>>()),
        Some(vec!["confirm".to_owned()]),
        "only the outstanding question is shown"
    );
    ok(
        "answer",
        store
            .answer(
                &id,
                Some("alice"),
                answers(&[("confirm", json!({"action": "decline"}))]),
            )
            .await,
    );
    assert!(
        wakes_within(wake, Duration::from_secs(2), runtime).await,
        "the runner is woken once every question has an answer"
    );
    let done = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(
        done.status,
        TaskStatus::Working,
        "answered, the task works again"
    );
    assert!(done.view(store.policy()).input_requests.is_none());
    let taken = ok("take", store.take_answers(&id).await).expect("the round's answers");
    assert_eq!(
        taken,
        answers(&[
            (
                "amount",
                json!({"action": "accept", "content": {"amount": 5}})
            ),
            ("confirm", json!({"action": "decline"}))
        ]),
        "the answers, without keys that were not asked"
    );
    assert!(
        ok("take", store.take_answers(&id).await).is_none(),
        "answers are taken once"
    );
    // A second round drops nothing it should keep and asks afresh.
    ok("ask", store.ask(&id, questions(&["amount"])).await);
    ok(
        "answer",
        store
            .answer(
                &id,
                Some("alice"),
                answers(&[("amount", json!({"action": "cancel"}))]),
            )
            .await,
    );
    assert_eq!(
        ok("take", store.take_answers(&id).await),
        Some(answers(&[("amount", json!({"action": "cancel"}))]))
    );
}

async fn endings(store: &impl TaskStore) {
    let id = ok("create", store.create(owner("alice")).await).id;
    let result = json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"list": [], "map": {}}});
    ok(
        "finish",
        store
            .finish(&id, TaskOutcome::Completed(result.clone()))
            .await,
    );
    let done = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(
        done.result,
        Some(result.clone()),
        "the result as given, empty arrays and objects kept"
    );
    ok(
        "finish",
        store
            .finish(&id, TaskOutcome::Failed(ErrorObject::new(-32603, "late")))
            .await,
    );
    assert!(ok("cancel", store.cancel(&id, Some("alice")).await));
    ok("ask", store.ask(&id, questions(&["late"])).await);
    let still = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(
        (still.status, still.result),
        (TaskStatus::Completed, Some(result)),
        "an ended task does not change"
    );

    let id = ok("create", store.create(owner("alice")).await).id;
    let error = ErrorObject::new(-32602, "bad arguments");
    ok(
        "finish",
        store.finish(&id, TaskOutcome::Failed(error.clone())).await,
    );
    let failed = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.error, Some(error));
    assert_eq!(failed.message.as_deref(), Some("bad arguments"));
}

async fn cancellation(store: &impl TaskStore, runtime: &dyn TaskRuntime) {
    let id = ok("create", store.create(owner("alice")).await).id;
    ok("ask", store.ask(&id, questions(&["amount"])).await);
    let wake = store.changed(&id);
    assert!(ok("cancel", store.cancel(&id, Some("alice")).await));
    assert!(
        wakes_within(wake, Duration::from_secs(1), runtime).await,
        "a cancel wakes the runner within a second"
    );
    let cancelled = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert!(cancelled.view(store.policy()).input_requests.is_none());
    assert_eq!(
        ok("renew", store.renew(&id).await),
        Some(TaskStatus::Cancelled),
        "the runner learns of the cancel when it renews"
    );
    ok(
        "finish",
        store.finish(&id, TaskOutcome::Completed(json!({}))).await,
    );
    assert_eq!(status(store, &id, "alice").await, TaskStatus::Cancelled);
}

async fn task_quotas(store: &impl TaskStore) {
    let policy = store.policy().clone();
    let mut mine = Vec::new();
    for _ in 0..policy.max_live_per_caller {
        mine.push(ok("create", store.create(owner("mallory")).await).id);
    }
    assert_eq!(
        store.create(owner("mallory")).await,
        Err(TaskStoreError::CallerFull(policy.max_live_per_caller)),
        "one caller cannot take every slot"
    );
    let alice = ok("create", store.create(owner("alice")).await).id;
    // Finished tasks no longer count as live; past the kept quota the
    // caller's oldest finished task goes.
    for id in &mine {
        ok(
            "finish",
            store.finish(id, TaskOutcome::Completed(json!({}))).await,
        );
    }
    for _ in mine.len()..policy.max_kept_per_caller {
        let id = ok("create", store.create(owner("mallory")).await).id;
        ok(
            "finish",
            store.finish(&id, TaskOutcome::Completed(json!({}))).await,
        );
    }
    assert!(ok("get", store.get(&mine[0], Some("mallory")).await).is_some());
    ok("create", store.create(owner("mallory")).await);
    assert!(
        ok("get", store.get(&mine[0], Some("mallory")).await).is_none(),
        "the caller's oldest finished task made room"
    );
    assert!(
        ok("get", store.get(&alice, Some("alice")).await).is_some(),
        "another caller's task stays"
    );
    // The store as a whole: callers of one live task each fill it.
    let mut n = 0;
    let full = loop {
        match store.create(owner(&format!("caller{n}"))).await {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        assert!(
            n <= policy.max_kept,
            "the store took more than {} tasks",
            policy.max_kept
        );
    };
    assert_eq!(full, TaskStoreError::Full, "a full store refuses");
}

async fn byte_quotas(store: &impl TaskStore) {
    let policy = store.policy().clone();
    let big = |fill: usize| json!({"text": "x".repeat(fill)});
    // One task's bound.
    let id = ok("create", store.create(owner("alice")).await).id;
    ok(
        "finish",
        store
            .finish(&id, TaskOutcome::Completed(big(policy.max_result_bytes)))
            .await,
    );
    let failed = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(
        failed.status,
        TaskStatus::Failed,
        "a result too large fails its task"
    );
    assert!(failed.result.is_none());
    assert!(
        failed
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("at most"),
        "saying so: {:?}",
        failed.message
    );
    // A caller's budget.
    let each = policy.max_result_bytes - 100;
    let fits = policy.max_kept_bytes_per_caller / (each + 12);
    for _ in 0..fits {
        let id = ok("create", store.create(owner("mallory")).await).id;
        ok(
            "finish",
            store.finish(&id, TaskOutcome::Completed(big(each))).await,
        );
        assert_eq!(status(store, &id, "mallory").await, TaskStatus::Completed);
    }
    let id = ok("create", store.create(owner("mallory")).await).id;
    ok(
        "finish",
        store.finish(&id, TaskOutcome::Completed(big(each))).await,
    );
    let over = ok("get", store.get(&id, Some("mallory")).await).unwrap();
    assert_eq!(over.status, TaskStatus::Failed, "past the caller's budget");
    assert!(
        over.message
            .as_deref()
            .unwrap_or_default()
            .contains("this caller's tasks keep"),
        "{:?}",
        over.message
    );
    // Another caller still has room, until the store's budget runs out.
    let mut callers = 0;
    loop {
        let id = ok(
            "create",
            store.create(owner(&format!("other{callers}"))).await,
        )
        .id;
        ok(
            "finish",
            store.finish(&id, TaskOutcome::Completed(big(each))).await,
        );
        let task = ok(
            "get",
            store.get(&id, Some(&format!("other{callers}"))).await,
        )
        .unwrap();
        if task.status == TaskStatus::Failed {
            assert!(
                task.message
                    .as_deref()
                    .unwrap_or_default()
                    .contains("the server's tasks keep"),
                "{:?}",
                task.message
            );
            break;
        }
        callers += 1;
        assert!(callers < 100, "the store's byte budget never ran out");
    }
    assert!(callers >= 1, "another caller was refused at once");
}

async fn abandoned_runner(store: &impl TaskStore, runtime: &dyn TaskRuntime) {
    let id = ok("create", store.create(owner("alice")).await).id;
    let renewed = ok("create", store.create(owner("alice")).await).id;
    ok("ask", store.ask(&id, questions(&["amount"])).await);
    let wait = crate::task_store::RUNNER_LEASE + Duration::from_millis(300);
    let step = Duration::from_millis(500);
    let mut waited = Duration::ZERO;
    while waited < wait {
        ok("renew", store.renew(&renewed).await);
        runtime.sleep(step).await;
        waited += step;
    }
    let failed = ok("get", store.get(&id, Some("alice")).await).unwrap();
    assert_eq!(
        failed.status,
        TaskStatus::Failed,
        "a task whose runner stopped renewing fails"
    );
    assert!(
        failed
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("stopped"),
        "saying why: {:?}",
        failed.message
    );
    assert!(failed.error.is_some());
    assert_eq!(
        status(store, &renewed, "alice").await,
        TaskStatus::Working,
        "a renewed task works on"
    );
}

async fn expiry(store: &impl TaskStore, runtime: &dyn TaskRuntime) {
    let id = ok("create", store.create(owner("alice")).await).id;
    assert!(ok("get", store.get(&id, Some("alice")).await).is_some());
    // Results that fill most of a caller's byte budget...
    fill_most_of_the_budget(store).await;
    runtime.sleep(Duration::from_millis(600)).await;
    assert!(
        ok("get", store.get(&id, Some("alice")).await).is_none(),
        "a task is gone after its TTL"
    );
    assert_eq!(
        ok("renew", store.renew(&id).await),
        None,
        "its runner stops"
    );
    // ...are given back when their tasks expire.
    fill_most_of_the_budget(store).await;
}

/// Two results of `mallory`'s that together take most of its byte budget.
async fn fill_most_of_the_budget(store: &impl TaskStore) {
    let each = json!({"text": "x".repeat(store.policy().max_result_bytes - 100)});
    for _ in 0..2 {
        let id = ok("create", store.create(owner("mallory")).await).id;
        ok(
            "finish",
            store
                .finish(&id, TaskOutcome::Completed(each.clone()))
                .await,
        );
        assert_eq!(
            status(store, &id, "mallory").await,
            TaskStatus::Completed,
            "the bytes of expired results are given back"
        );
    }
}
