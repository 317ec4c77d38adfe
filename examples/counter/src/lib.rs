//! The `increase-counter` server of the MRTR tutorial, built only from Tessera's public APIs.
//!
//! Round one asks for an amount, round two for a confirmation, round three
//! answers `Counter increased by 5; next value is 15`. A decline, a cancel or
//! an unconfirmed increase answers `Counter increase cancelled.`, and so does
//! an answer that does not fit the form, as in the reference counter.

pub use counter_tool::{
    CANCELLED, CounterArgs, SERVER_NAME, counter_server, counter_server_from, increase_counter,
    increase_counter_tool,
};
