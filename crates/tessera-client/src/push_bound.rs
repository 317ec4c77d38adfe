//! The bound on an initialize-era call that may push questions: the server
//! may push at most `max_rounds` requests during one call, and the call
//! waits on the server at most the client's timeout — the time a person
//! spends answering a pushed question is not counted, so a slow answer
//! never ends a call, and a server that is silent or pushes without end
//! does, over HTTP and stdio alike.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::ClientError;

/// One client's bound on its initialize-era calls, reset as each begins: a
/// server of that era pushes its questions without saying which call they
/// are for, so calls made at once on one client share one bound.
pub(crate) struct PushBound {
    max_pushed: usize,
    timeout: Duration,
    state: Mutex<State>,
    changed: tokio::sync::Notify,
}

#[derive(Default)]
struct State {
    pushed: usize,
    /// What the last pushed request asked: its key and message.
    last: Option<(String, Option<String>)>,
    /// Time spent answering pushed requests; how many are being answered
    /// now (over stdio two may be at once), and since when one has been.
    answering: Duration,
    open: usize,
    since: Option<Instant>,
}

impl State {
    fn answering(&self, now: Instant) -> Duration {
        self.answering + self.since.map_or(Duration::ZERO, |s| now - s)
    }
}

/// Counts one answer's time while it lives.
pub(crate) struct Answering(Arc<PushBound>);

impl Drop for Answering {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.open = state.open.saturating_sub(1);
        if state.open == 0
            && let Some(since) = state.since.take()
        {
            state.answering += since.elapsed();
        }
    }
}

impl PushBound {
    /// At most `max_pushed` requests per call, waiting on the server at most `timeout`.
    pub(crate) fn new(max_pushed: usize, timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            max_pushed,
            timeout,
            state: Mutex::default(),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request the server pushed (asking `key`, with `message`): `None`
    /// past the limit (the call is then ended), else the guard that counts
    /// the time it takes to answer.
    pub(crate) fn pushed(
        self: &Arc<Self>,
        key: &str,
        message: Option<String>,
    ) -> Option<Answering> {
        let mut state = self.lock();
        state.pushed += 1;
        state.last = Some((key.to_owned(), message));
        if state.pushed > self.max_pushed {
            drop(state);
            self.changed.notify_waiters();
            return None;
        }
        state.open += 1;
        state.since.get_or_insert_with(Instant::now);
        Some(Answering(Arc::clone(self)))
    }

    /// Runs one call's exchange `exchange` within the bound.
    pub(crate) async fn around<F: Future>(&self, exchange: F) -> Result<F::Output, ClientError> {
        *self.lock() = State::default();
        let started = Instant::now();
        let mut exchange = std::pin::pin!(exchange);
        loop {
            let notified = self.changed.notified();
            let wake = {
                let state = self.lock();
                let now = Instant::now();
                if state.pushed > self.max_pushed {
                    return Err(ClientError::TooManyRounds {
                        rounds: self.max_pushed,
                        asked: state.last.clone().into_iter().collect(),
                    });
                }
                let end = started + self.timeout + state.answering(now);
                if now >= end && state.since.is_none() {
                    return Err(ClientError::TimedOut {
                        limit: self.timeout,
                    });
                }
                // While a person answers, look again a little later.
                end.max(now + Duration::from_millis(50))
            };
            tokio::select! {
                out = &mut exchange => return Ok(out),
                () = tokio::time::sleep_until(wake.into()) => {}
                () = notified => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_silent_server_ends_the_call_at_the_timeout() {
        let bound = PushBound::new(3, Duration::from_millis(100));
        let started = Instant::now();
        let out = bound.around(std::future::pending::<()>()).await;
        assert!(matches!(out, Err(ClientError::TimedOut { .. })), "{out:?}");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }

    #[tokio::test]
    async fn answering_time_is_not_counted_and_pushes_past_the_limit_end_the_call() {
        let bound = PushBound::new(2, Duration::from_millis(100));
        let b = Arc::clone(&bound);
        let out = bound
            .around(async move {
                // A person taking 300 ms (three timeouts) to answer.
                let answering = b.pushed("amount", Some("How much?".into()));
                tokio::time::sleep(Duration::from_millis(300)).await;
                drop(answering);
                "done"
            })
            .await;
        assert_eq!(out.unwrap(), "done");

        // Two answered at once (stdio answers each on its own task): the
        // clock stays stopped until the last one is given.
        let b = Arc::clone(&bound);
        let out = bound
            .around(async move {
                let first = b.pushed("a", None);
                let second = b.pushed("b", None);
                drop(first);
                tokio::time::sleep(Duration::from_millis(300)).await;
                drop(second);
                "both"
            })
            .await;
        assert_eq!(out.unwrap(), "both");

        let b = Arc::clone(&bound);
        let out = bound
            .around(async move {
                for round in 0.. {
                    if b.pushed(&format!("q{round}"), None).is_none() {
                        break;
                    }
                }
                std::future::pending::<()>().await;
            })
            .await;
        match out {
            Err(ClientError::TooManyRounds { rounds: 2, asked }) => {
                assert_eq!(asked, vec![("q2".to_owned(), None)]);
            }
            other => panic!("{other:?}"),
        }
    }
}
