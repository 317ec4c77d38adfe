//! Application state: values the server is built with, reachable from every handler.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use crate::{Context, HandlerError};

/// Values of distinct types, set once when the server is built.
#[derive(Default)]
pub(crate) struct AppState(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl AppState {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.0.get(&TypeId::of::<T>())?.downcast_ref()
    }

    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }
}

/// Application state of type `T` in a handler: `State(pool): State<Pool>`.
///
/// Set with [`McpServerBuilder::with_state`](crate::McpServerBuilder::with_state);
/// `#[tessera::tool]` handlers take it as a parameter, and a server whose
/// handlers need a state it was not given fails to build, naming the type.
///
/// ```
/// use tessera_server::{Context, State};
///
/// #[derive(Clone)]
/// struct Greeting(&'static str);
///
/// fn greet(ctx: &Context, name: &str) -> tessera_server::Result<String> {
///     let State(Greeting(hello)) = State::<Greeting>::from_context(ctx)?;
///     Ok(format!("{hello}, {name}!"))
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> State<T> {
    /// The state of type `T` of the server serving `ctx`.
    pub fn from_context(ctx: &Context) -> Result<Self, HandlerError> {
        ctx.app_state::<T>().cloned().map(State).ok_or_else(|| {
            HandlerError::msg(format!(
                "the server has no state of type {} (McpServerBuilder::with_state)",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// A state type a handler needs, checked when the server is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NeededState {
    pub(crate) id: TypeId,
    pub(crate) name: &'static str,
}

impl NeededState {
    pub(crate) fn of<T: 'static>() -> Self {
        Self {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        }
    }
}
