//! The `increase-counter` server of the MRTR tutorial, built only from Tessera's public APIs.
//!
//! Round one asks for an amount, round two for a confirmation, round three
//! answers `Counter increased by 5; next value is 15`. A decline, a cancel or
//! an unconfirmed increase answers `Counter increase cancelled.`; an answer
//! that does not fit the form is asked for again, saying why.

pub use counter_tool::{
    SERVER_NAME, counter_server, counter_server_from, increase_counter, increase_counter_tool,
};
