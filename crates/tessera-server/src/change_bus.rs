//! Where changes travel from the code that makes them to every listener: in
//! this process ([`MemoryBus`], the default), or across instances (a shared
//! bus such as `tessera-redis`'s).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::{BoxFuture, Change};

/// What a bus tells its listeners.
#[derive(Debug, Clone, Copy)]
pub enum BusEvent<'a> {
    /// Something changed.
    Change(&'a Change),
    /// The bus can no longer deliver (e.g. its shared backend is unreachable):
    /// listeners end their subscriptions gracefully, and clients listen again.
    Lost,
}

/// Called with every event of the bus; must not block.
pub type ChangeListener = Arc<dyn Fn(BusEvent<'_>) + Send + Sync>;

/// A listener's registration; dropping it unsubscribes.
pub struct Subscription(#[allow(dead_code)] Box<dyn Send + Sync>);

impl Subscription {
    /// Wraps whatever unsubscribes when dropped.
    pub fn new(guard: impl Send + Sync + 'static) -> Self {
        Self(Box::new(guard))
    }
}

/// Publishing failed (a shared bus's backend is unreachable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the change could not be published: {0}")]
pub struct BusError(pub String);

/// Carries changes to listeners.
pub trait ChangeBus: Send + Sync {
    /// Sends `change` to every listener (on every instance, for a shared bus).
    fn publish(&self, change: Change) -> BoxFuture<'_, Result<(), BusError>>;

    /// Registers `listener` until the returned [`Subscription`] is dropped.
    fn subscribe(&self, listener: ChangeListener) -> Subscription;
}

/// The listeners of one process, and the bus for a single instance.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
/// use tessera_server::{BusEvent, Change, ChangeBus, MemoryBus};
///
/// let bus = MemoryBus::default();
/// let seen = Arc::new(AtomicUsize::new(0));
/// let counter = Arc::clone(&seen);
/// let subscription = bus.subscribe(Arc::new(move |event| {
///     if let BusEvent::Change(_) = event { counter.fetch_add(1, Ordering::Relaxed); }
/// }));
/// bus.deliver(BusEvent::Change(&Change::ToolsListChanged));
/// drop(subscription);
/// bus.deliver(BusEvent::Change(&Change::ToolsListChanged));
/// assert_eq!(seen.load(Ordering::Relaxed), 1);
/// ```
#[derive(Default, Clone)]
pub struct MemoryBus {
    listeners: Arc<Listeners>,
}

#[derive(Default)]
struct Listeners {
    next: AtomicU64,
    by_id: Mutex<HashMap<u64, ChangeListener>>,
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, ChangeListener>> {
        self.by_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Unregisters a listener when dropped.
struct Unsubscribe {
    listeners: Arc<Listeners>,
    id: u64,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        self.listeners.lock().remove(&self.id);
    }
}

impl MemoryBus {
    /// Calls every listener of this process with `event`.
    pub fn deliver(&self, event: BusEvent<'_>) {
        // Called outside the lock: a listener may subscribe or unsubscribe.
        let listeners: Vec<ChangeListener> = self.listeners.lock().values().cloned().collect();
        for listener in listeners {
            listener(event);
        }
    }

    /// How many listeners are registered.
    pub fn listener_count(&self) -> usize {
        self.listeners.lock().len()
    }
}

impl ChangeBus for MemoryBus {
    fn publish(&self, change: Change) -> BoxFuture<'_, Result<(), BusError>> {
        self.deliver(BusEvent::Change(&change));
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe(&self, listener: ChangeListener) -> Subscription {
        let id = self.listeners.next.fetch_add(1, Ordering::Relaxed);
        self.listeners.lock().insert(id, listener);
        Subscription::new(Unsubscribe {
            listeners: Arc::clone(&self.listeners),
            id,
        })
    }
}
