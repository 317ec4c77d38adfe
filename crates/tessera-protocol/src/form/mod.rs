//! Elicitation forms on the wire: the restricted schema (a flat object of
//! primitive fields) and checking submitted content against it.

mod content;
mod schema;

pub use content::*;
pub use schema::*;
