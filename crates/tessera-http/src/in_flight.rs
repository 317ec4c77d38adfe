//! Requests being served now, by caller and JSON-RPC id, so that a
//! `notifications/cancelled` POSTed on another connection can stop one.
//!
//! Over Streamable HTTP the spec's cancellation signal is closing the
//! response (cancellation.mdx: "Closing the SSE response stream is the
//! cancellation signal"), which the server honours by dropping the handler;
//! authenticated clients that send `notifications/cancelled` instead are
//! honoured too. With no session, a request is found by who sent it (the
//! authenticated principal) and its id; when two in-flight requests of the
//! same caller share an id, neither is cancelled. Anonymous callers cannot be
//! told apart, so their notices are ignored (they cancel by closing).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use tessera_protocol::RequestId;

/// Who sent a request (an authenticated principal), and its id.
type Key = (String, RequestId);

/// The requests being served, with the signal that stops each.
#[derive(Default)]
pub(crate) struct InFlight {
    running: Mutex<HashMap<Key, Vec<Arc<Signal>>>>,
}

/// Set once a request is cancelled; wakes its future.
#[derive(Default)]
pub(crate) struct Signal {
    state: Mutex<(bool, Option<Waker>)>,
}

/// Takes a request off the registry when its future ends or is dropped.
/// An anonymous caller's request is not recorded at all (nothing could
/// cancel it but closing its response).
pub(crate) struct Registration {
    registry: Arc<InFlight>,
    entry: Option<(Key, Arc<Signal>)>,
}

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, HashMap<Key, Vec<Arc<Signal>>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records request `id` of `principal` until the registration is
    /// dropped; an anonymous one (`None`) is not recorded.
    pub(crate) fn register(
        self: &Arc<Self>,
        principal: Option<&str>,
        id: &RequestId,
    ) -> Registration {
        let entry = principal.map(|principal| {
            let key = (principal.to_owned(), id.clone());
            let signal = Arc::new(Signal::default());
            self.lock()
                .entry(key.clone())
                .or_default()
                .push(Arc::clone(&signal));
            (key, signal)
        });
        Registration {
            registry: Arc::clone(self),
            entry,
        }
    }

    /// Cancels request `id` of `principal` when it is running and unambiguous;
    /// says whether it did.
    pub(crate) fn cancel(&self, principal: Option<&str>, id: &RequestId) -> bool {
        // An anonymous caller's requests are never recorded.
        let Some(principal) = principal else {
            return false;
        };
        let key = (principal.to_owned(), id.clone());
        let signal = match self.lock().get(&key).map(Vec::as_slice) {
            Some([one]) => Arc::clone(one),
            _ => return false,
        };
        signal.set();
        true
    }
}

impl Signal {
    fn lock(&self) -> MutexGuard<'_, (bool, Option<Waker>)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self) {
        let waker = {
            let mut state = self.lock();
            state.0 = true;
            state.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl Registration {
    /// `work`, stopped (dropped) when the request is cancelled: `None` then.
    pub(crate) fn run<F: Future>(self, work: F) -> Cancellable<F> {
        Cancellable {
            work,
            registration: self,
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's work that its cancellation stops (dropped when cancelled,
    /// and `None` then). A struct rather than an `async fn`, so the work's
    /// future is held once and not moved again: it is the largest value a
    /// request makes, and every move of it is a copy.
    pub(crate) struct Cancellable<F> {
        #[pin]
        work: F,
        registration: Registration,
    }
}

impl<F: Future> Future for Cancellable<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some((_, signal)) = &this.registration.entry {
            let mut state = signal.lock();
            if state.0 {
                return Poll::Ready(None);
            }
            state.1 = Some(cx.waker().clone());
        }
        this.work.poll(cx).map(Some)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some((key, signal)) = &self.entry else {
            return;
        };
        let mut running = self.registry.lock();
        if let Some(signals) = running.get_mut(key) {
            signals.retain(|s| !Arc::ptr_eq(s, signal));
            if signals.is_empty() {
                running.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_cancelled_request_stops_and_leaves_the_registry() {
        let registry = Arc::new(InFlight::default());
        let id = RequestId::from(7);
        let registration = registry.register(Some("alice"), &id);
        assert!(!registry.cancel(Some("bob"), &id), "another caller's id");
        assert!(!registry.cancel(None, &id));
        assert!(registry.cancel(Some("alice"), &id));
        let out = block_on(registration.run(std::future::pending::<()>()));
        assert_eq!(out, None);
        assert!(registry.lock().is_empty());
    }

    #[test]
    fn an_ambiguous_id_cancels_nothing_and_finished_work_is_returned() {
        let registry = Arc::new(InFlight::default());
        let id = RequestId::from("same");
        let first = registry.register(Some("alice"), &id);
        let second = registry.register(Some("alice"), &id);
        assert!(!registry.cancel(Some("alice"), &id));
        drop(second);
        assert_eq!(block_on(first.run(async { 5 })), Some(5));
        assert!(
            !registry.cancel(Some("alice"), &id),
            "gone once it finished"
        );
    }

    #[test]
    fn an_anonymous_request_is_not_recorded_and_still_runs() {
        let registry = Arc::new(InFlight::default());
        let id = RequestId::from(1);
        let anonymous = registry.register(None, &id);
        assert!(registry.lock().is_empty());
        assert!(!registry.cancel(None, &id));
        assert_eq!(block_on(anonymous.run(async { 6 })), Some(6));
    }
}
