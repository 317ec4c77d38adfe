//! What a handler returns: a complete result, or a request for input.

use tessera_protocol::{CallToolResult, GetPromptResult, ReadResourceResult};

use crate::InputRequired;

/// A handler's answer: the final result `R`, or input it needs first (with state `S`).
#[derive(Debug)]
pub enum Reply<R, S = ()> {
    /// The request is done.
    Complete(R),
    /// Ask the client for input, then expect a retry.
    InputRequired(InputRequired<S>),
}

/// What a tool handler returns.
pub type ToolReply<S = ()> = Reply<CallToolResult, S>;
/// What a prompt handler returns.
pub type PromptReply<S = ()> = Reply<GetPromptResult, S>;
/// What a resource handler returns.
pub type ResourceReply<S = ()> = Reply<ReadResourceResult, S>;

impl<S> From<CallToolResult> for Reply<CallToolResult, S> {
    fn from(r: CallToolResult) -> Self {
        Self::Complete(r)
    }
}

impl<S> From<GetPromptResult> for Reply<GetPromptResult, S> {
    fn from(r: GetPromptResult) -> Self {
        Self::Complete(r)
    }
}

impl<S> From<ReadResourceResult> for Reply<ReadResourceResult, S> {
    fn from(r: ReadResourceResult) -> Self {
        Self::Complete(r)
    }
}

impl<R, S> From<InputRequired<S>> for Reply<R, S> {
    fn from(r: InputRequired<S>) -> Self {
        Self::InputRequired(r)
    }
}
