//! The whole arguments of a tool or prompt as one type.

/// All of a handler's arguments as one type `T`, for `#[tessera::tool]` and
/// `#[tessera::prompt]` functions that reuse an arguments type or describe it
/// as a whole (`Arguments(args): Arguments<CounterArgs>`); without it, each
/// plain parameter is one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arguments<T>(pub T);
