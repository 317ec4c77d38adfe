//! What this instance's running tasks hold: each task's driver keeps the
//! call's arguments for as long as it runs (it runs the handler again from
//! the top every round), and those are the caller's choice. They are
//! counted per caller, so one caller's running tasks hold at most
//! [`MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER`] of arguments here, beside the
//! results its kept tasks hold (the task store's byte budgets).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::ServerError;

/// The JSON bytes of arguments one caller's running tasks may hold on one
/// instance: 16 MiB.
pub const MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER: usize = 16 * 1024 * 1024;

/// Argument bytes held by running tasks, by caller.
#[derive(Default)]
pub(crate) struct RunningTasks {
    held: Mutex<HashMap<Option<String>, usize>>,
}

/// One running task's arguments, counted until dropped.
pub(crate) struct Held {
    running: Arc<RunningTasks>,
    caller: Option<String>,
    bytes: usize,
}

impl RunningTasks {
    /// Counts `bytes` of arguments for a task of `caller`, or refuses it
    /// (503 with `Retry-After: 5`) when the caller's running tasks would
    /// hold more than [`MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER`].
    pub(crate) fn hold(
        self: &Arc<Self>,
        caller: Option<String>,
        bytes: usize,
    ) -> Result<Held, ServerError> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = held.get(&caller).copied().unwrap_or(0);
        if mine.saturating_add(bytes) > MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER {
            return Err(ServerError::Unavailable {
                message: format!(
                    "your running tasks hold {} of arguments already, and this call's are {}: at most {} MiB in all; wait for a task to finish, or send smaller arguments",
                    shown(mine),
                    shown(bytes),
                    MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER / (1024 * 1024)
                ),
                retry_after_secs: 5,
            });
        }
        *held.entry(caller.clone()).or_default() += bytes;
        Ok(Held {
            running: Arc::clone(self),
            caller,
            bytes,
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self
            .running
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = held.get_mut(&self.caller) {
            *n = n.saturating_sub(self.bytes);
            if *n == 0 {
                held.remove(&self.caller);
            }
        }
    }
}

/// `bytes` as a person reads it.
fn shown(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_running_arguments_are_bounded_and_freed() {
        let running = Arc::new(RunningTasks::default());
        let mb = 1024 * 1024;
        let a: Vec<Held> = (0..16)
            .map(|_| running.hold(Some("a".into()), mb).unwrap())
            .collect();
        let refused = running.hold(Some("a".into()), 1).err().unwrap();
        assert!(refused.to_string().contains("16.0 MiB"), "{refused}");
        // A refusal keeps nothing.
        assert!(running.hold(Some("c".into()), 17 * mb).is_err());
        assert!(!running.held.lock().unwrap().contains_key(&Some("c".into())));
        // Another caller is not held back.
        let _b = running.hold(Some("b".into()), mb).unwrap();
        drop(a);
        assert!(running.hold(Some("a".into()), 16 * mb).is_ok());
        assert_eq!(running.held.lock().unwrap().len(), 1, "freed at zero");
    }
}
