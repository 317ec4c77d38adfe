//! The whole arguments of a tool or prompt as one type.

/// All of a handler's arguments as one type `T`, for `#[tessera::tool]` and
/// `#[tessera::prompt]` functions that reuse an arguments type or describe it
/// as a whole (`Arguments(args): Arguments<CounterArgs>`); without it, each
/// plain parameter is one argument.
///
/// ```
/// use tessera_server::{Arguments, Context, ToolDef};
///
/// /// Where to look.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Search { query: String }
///
/// // What `#[tessera::tool]` writes for `async fn search(Arguments(s): Arguments<Search>)`.
/// let tool = ToolDef::new("search", |_ctx: Context, s: Search| async move {
///     let Arguments(s) = Arguments(s);
///     format!("searching {}", s.query)
/// });
/// assert_eq!(tool.definition().input_schema["description"], "Where to look.");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arguments<T>(pub T);
