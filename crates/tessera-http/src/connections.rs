//! The connections [`serve_with`](crate::serve_with) holds, what each is
//! doing, and which one gives way when a new connection arrives at the cap.
//!
//! At the cap the newcomer is not the one refused: the connection that has
//! made the least progress is closed in its place — first one that never
//! completed a request head, the longest waiting; then a request whose body
//! stalls (past a short grace, arriving slower than [`MIN_UPLOAD_RATE`]), the
//! slowest; then an idle keep-alive connection, the longest idle; then the
//! oldest listen stream of the client holding the most. A connection serving
//! a request (a handler running, an answer being written, a body arriving at
//! a fair rate) never gives way; when every connection is one, the newcomer is
//! shed.
//!
//! The slot types are runtime-free (the endpoint reads a slot from the
//! request's extensions on any host); only `serve` creates them.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_channel::oneshot;
use tessera_protocol::clock::Instant;

/// How long a body is given before its rate is judged.
pub(crate) const UPLOAD_GRACE: Duration = Duration::from_millis(250);

/// Below this rate (bytes a second since its head arrived) a body counts as
/// stalled: holding a slot then costs an attacker a kilobyte a second per slot.
pub(crate) const MIN_UPLOAD_RATE: u64 = 1024;

/// The open connections, by number.
pub(crate) struct Connections {
    open: Mutex<HashMap<u64, Arc<Slot>>>,
    next: AtomicU64,
    grace: Duration,
}

impl Default for Connections {
    fn default() -> Self {
        Self::with_grace(UPLOAD_GRACE)
    }
}

/// One open connection, as the endpoint sees it in a request's extensions.
#[derive(Clone)]
pub(crate) struct ConnectionSlot(Arc<Slot>);

struct Slot {
    number: u64,
    peer: IpAddr,
    /// Whether a PROXY protocol header named the peer.
    by_header: bool,
    state: Mutex<SlotState>,
    /// Fired to close the connection.
    close: Mutex<Option<oneshot::Sender<()>>>,
}

struct SlotState {
    /// Requests begun and not yet fully answered.
    requests: u32,
    /// Request bodies being received.
    uploading: u32,
    /// When the latest request's head arrived, and the body bytes since.
    began: Instant,
    body_bytes: u64,
    /// Requests answered on this connection.
    answered: u64,
    /// The client whose listen stream this connection carries.
    listening: Option<Arc<str>>,
    /// The last sign of progress: opened, a request answered, a body byte, a stream begun.
    since: Instant,
    /// Chosen to close: not chosen again.
    evicted: bool,
}

/// Why a connection may give way, the lower the likelier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Yield {
    NoHeadYet,
    StalledBody,
    IdleKeepAlive,
    Listening,
}

impl Yield {
    /// The reason as the `tessera.connections.shed` metric names it.
    fn as_str(self) -> &'static str {
        match self {
            Self::NoHeadYet => "no_head_yet",
            Self::StalledBody => "stalled_body",
            Self::IdleKeepAlive => "idle_keep_alive",
            Self::Listening => "listening",
        }
    }
}

/// The order in which connections give way: reason, then (listen streams)
/// the client holding the most, then (bodies) the slowest, then the oldest.
type Rank = (Yield, Reverse<usize>, u64, Instant);

impl Connections {
    /// Connections whose bodies are judged after `grace`.
    pub(crate) fn with_grace(grace: Duration) -> Self {
        Self {
            open: Mutex::default(),
            next: AtomicU64::new(0),
            grace,
        }
    }

    /// A connection from `peer`, as the tests open one.
    #[cfg(test)]
    pub(crate) fn open(&self, peer: IpAddr) -> (ConnectionSlot, oneshot::Receiver<()>) {
        self.open_named(peer, false)
    }

    /// Records a new connection from `peer`; the receiver fires when it
    /// must close. `by_header`: a PROXY protocol header named the peer, so
    /// nothing the connection sends after it is a proxy's word, and its
    /// `X-Forwarded-For` is never read.
    pub(crate) fn open_named(
        &self,
        peer: IpAddr,
        by_header: bool,
    ) -> (ConnectionSlot, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let slot = Arc::new(Slot {
            number,
            peer,
            by_header,
            state: Mutex::new(SlotState {
                requests: 0,
                uploading: 0,
                began: now,
                body_bytes: 0,
                answered: 0,
                listening: None,
                since: now,
                evicted: false,
            }),
            close: Mutex::new(Some(tx)),
        });
        self.lock().insert(number, Arc::clone(&slot));
        (ConnectionSlot(slot), rx)
    }

    /// Forgets a connection that closed.
    pub(crate) fn closed(&self, slot: &ConnectionSlot) {
        self.lock().remove(&slot.0.number);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Slot>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes the connection that made the least progress, if one may give
    /// way; says whether one did.
    pub(crate) fn evict_one(&self) -> bool {
        // A connection may have begun a request since it was chosen: choose
        // again then (a few times; each retry means a connection progressed).
        for _ in 0..4 {
            let Some((why, slot)) = self.least_progress() else {
                return false;
            };
            let mut state = slot.state();
            if state.evicted || state.yields(self.grace) != Some(why) {
                continue;
            }
            state.evicted = true;
            drop(state);
            tracing::debug!(?why, peer = %slot.peer, "at the connection cap: closing the connection that made the least progress");
            tessera_server::telemetry::metrics::connection_shed(why.as_str());
            if let Some(close) = slot
                .close
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                let _ = close.send(());
            }
            return true;
        }
        false
    }

    /// The connection that made the least progress, and why it may give way.
    fn least_progress(&self) -> Option<(Yield, Arc<Slot>)> {
        let open = self.lock();
        let mut listeners: HashMap<Arc<str>, usize> = HashMap::new();
        let mut candidates = Vec::new();
        for slot in open.values() {
            let state = slot.state();
            if state.evicted {
                continue;
            }
            let Some(why) = state.yields(self.grace) else {
                continue;
            };
            if let (Yield::Listening, Some(client)) = (why, &state.listening) {
                *listeners.entry(Arc::clone(client)).or_default() += 1;
            }
            let rate = if why == Yield::StalledBody {
                state.rate()
            } else {
                0
            };
            candidates.push((
                why,
                state.listening.clone(),
                rate,
                state.since,
                Arc::clone(slot),
            ));
        }
        drop(open);
        let held = |client: &Option<Arc<str>>| {
            client
                .as_ref()
                .map_or(0, |c| listeners.get(c).copied().unwrap_or(0))
        };
        candidates
            .into_iter()
            .min_by_key(|(why, client, rate, since, _)| -> Rank {
                (*why, Reverse(held(client)), *rate, *since)
            })
            .map(|(why, _, _, _, slot)| (why, slot))
    }
}

impl SlotState {
    /// Why this connection may give way at the cap; `None` while it serves a
    /// request (or receives a body at a fair rate).
    fn yields(&self, grace: Duration) -> Option<Yield> {
        if self.requests == 0 && self.answered == 0 {
            Some(Yield::NoHeadYet)
        } else if self.uploading > 0 {
            let stalled = self.began.elapsed() >= grace && self.rate() < MIN_UPLOAD_RATE;
            stalled.then_some(Yield::StalledBody)
        } else if self.requests == 0 {
            Some(Yield::IdleKeepAlive)
        } else if self.listening.is_some() {
            Some(Yield::Listening)
        } else {
            None
        }
    }

    /// Body bytes a second since the latest head arrived.
    fn rate(&self) -> u64 {
        let secs = self.began.elapsed().as_secs_f64().max(1e-3);
        (self.body_bytes as f64 / secs) as u64
    }
}

impl Slot {
    fn state(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ConnectionSlot {
    /// The address the connection came from.
    pub(crate) fn peer(&self) -> IpAddr {
        self.0.peer
    }

    /// Whether a PROXY protocol header named [`peer`](Self::peer) (then
    /// what follows the header is the client's, headers included).
    pub(crate) fn named_by_proxy_header(&self) -> bool {
        self.0.by_header
    }

    /// A request began: its head arrived and its body is being received.
    pub(crate) fn request_began(&self) -> (RequestOnSlot, BodyOnSlot) {
        let mut state = self.0.state();
        let now = Instant::now();
        state.requests += 1;
        state.uploading += 1;
        state.began = now;
        state.body_bytes = 0;
        state.since = now;
        (RequestOnSlot(self.clone()), BodyOnSlot(Some(self.clone())))
    }

    /// The connection now carries a listen stream of `client` (until its request ends).
    pub(crate) fn listening(&self, client: Arc<str>) {
        let mut state = self.0.state();
        state.listening = Some(client);
        state.since = Instant::now();
    }
}

/// A request on a connection, from its head to the end of its answer.
pub(crate) struct RequestOnSlot(ConnectionSlot);

/// A request's body being received on a connection.
pub(crate) struct BodyOnSlot(Option<ConnectionSlot>);

impl BodyOnSlot {
    /// `bytes` of the body arrived.
    pub(crate) fn progressed(&self, bytes: usize) {
        if let Some(slot) = &self.0 {
            let mut state = slot.0.state();
            state.body_bytes = state.body_bytes.saturating_add(bytes as u64);
            state.since = Instant::now();
        }
    }

    /// The whole body arrived (or never will: it failed or was dropped).
    pub(crate) fn done(&mut self) {
        if let Some(slot) = self.0.take() {
            let mut state = slot.0.state();
            state.uploading = state.uploading.saturating_sub(1);
            state.since = Instant::now();
        }
    }
}

impl Drop for BodyOnSlot {
    fn drop(&mut self) {
        self.done();
    }
}

impl Drop for RequestOnSlot {
    fn drop(&mut self) {
        let mut state = self.0.0.state();
        state.requests = state.requests.saturating_sub(1);
        state.answered += 1;
        if state.requests == 0 {
            state.listening = None;
        }
        state.since = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[test]
    fn a_connection_serving_a_request_never_gives_way() {
        let connections = Connections::with_grace(Duration::ZERO);
        let (slot, _rx) = connections.open(peer(1));
        let (request, body) = slot.request_began();
        drop(body);
        assert!(!connections.evict_one());
        drop(request);
        assert!(connections.evict_one(), "idle once answered");
        assert!(!connections.evict_one(), "not chosen twice");
    }

    #[test]
    fn no_head_goes_before_a_stalled_body_before_idle_before_a_listen_stream() {
        let connections = Connections::with_grace(Duration::ZERO);
        let (listen, mut listen_rx) = connections.open(peer(1));
        let (_listening, _) = listen.request_began();
        listen.listening("address 127.0.0.1".into());
        let (kept_alive, mut kept_alive_rx) = connections.open(peer(4));
        drop(kept_alive.request_began());
        let (upload, mut upload_rx) = connections.open(peer(2));
        let _uploading = upload.request_began();
        let (_idle, mut idle_rx) = connections.open(peer(3));
        assert!(connections.evict_one());
        assert_eq!(idle_rx.try_recv(), Ok(Some(())));
        assert_eq!(upload_rx.try_recv(), Ok(None));
        assert!(connections.evict_one());
        assert_eq!(upload_rx.try_recv(), Ok(Some(())));
        assert!(connections.evict_one());
        assert_eq!(kept_alive_rx.try_recv(), Ok(Some(())));
        assert!(connections.evict_one());
        assert_eq!(listen_rx.try_recv(), Ok(Some(())));
        assert!(!connections.evict_one());
    }

    #[test]
    fn a_body_arriving_at_a_fair_rate_is_not_stalled_and_the_slowest_goes_first() {
        let connections = Connections::with_grace(Duration::ZERO);
        let (fast, mut fast_rx) = connections.open(peer(1));
        let (_f, fast_body) = fast.request_began();
        fast_body.progressed(1 << 30);
        let (slow, mut slow_rx) = connections.open(peer(2));
        let (_s, slow_body) = slow.request_began();
        slow_body.progressed(1);
        let (still, mut still_rx) = connections.open(peer(3));
        let _still = still.request_began();
        assert!(connections.evict_one());
        assert_eq!(
            still_rx.try_recv(),
            Ok(Some(())),
            "no byte at all goes first"
        );
        assert!(connections.evict_one());
        assert_eq!(slow_rx.try_recv(), Ok(Some(())));
        assert!(!connections.evict_one(), "a fast upload is progress");
        assert_eq!(fast_rx.try_recv(), Ok(None));
        // Within the grace no body is judged.
        let patient = Connections::with_grace(Duration::from_secs(60));
        let (fresh, _rx) = patient.open(peer(4));
        let _fresh = fresh.request_began();
        assert!(!patient.evict_one());
    }

    #[test]
    fn the_client_holding_the_most_listen_streams_loses_its_oldest() {
        let connections = Connections::with_grace(Duration::ZERO);
        let stream = |client: &str| {
            let (slot, rx) = connections.open(peer(1));
            let (request, _) = slot.request_began();
            slot.listening(client.into());
            (slot, request, rx)
        };
        let (_a, _ra, mut alice) = stream("alice");
        let (_m1, _r1, mut oldest) = stream("mallory");
        let (_m2, _r2, mut newer) = stream("mallory");
        assert!(connections.evict_one());
        assert_eq!(oldest.try_recv(), Ok(Some(())));
        assert_eq!(newer.try_recv(), Ok(None));
        assert_eq!(alice.try_recv(), Ok(None));
    }
}
