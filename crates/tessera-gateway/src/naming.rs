//! How the gateway names what its upstreams offer.
//!
//! A tool or prompt `NAME` of upstream `UP` is offered as `UP__NAME`: the
//! upstream's name, two underscores, the upstream's own name. Upstream names
//! are letters, digits and `-` ([`crate::Config`]), so the first `__` always
//! ends the upstream's part. Every name the gateway offers uses only
//! `[A-Za-z0-9_-]` and at most 64 characters, the set and length every model
//! API accepts for a function name (the MCP tools page allows `.` too; some
//! model APIs do not). An upstream name with other characters has each of
//! them replaced by `_`, and a name that was changed that way, or that is
//! too long, ends with `_` and the first 8 hex digits of the SHA-256 of the
//! upstream's own name (so two names that differ only in such characters
//! stay apart, and every instance of the gateway names them alike).
//!
//! Resources keep their URIs (a client may understand `ui://` or `file://`);
//! their `name` is namespaced as tools are. When two upstreams offer the
//! same URI, the first in the configuration serves it.
//!
//! ```
//! use tessera_gateway::naming::offered_name;
//! assert_eq!(offered_name("booking", "find-room"), "booking__find-room");
//! assert_eq!(offered_name("fs", "read.file"), "fs__read_file_dd32cdf5");
//! assert!(offered_name("fs", &"x".repeat(100)).len() <= 64);
//! ```

/// The longest name the gateway offers.
pub const MAX_OFFERED_NAME: usize = 64;

/// What separates the upstream's name from its tool's or prompt's.
pub const SEPARATOR: &str = "__";

/// The name under which the gateway offers upstream `upstream`'s tool or prompt `name`.
pub fn offered_name(upstream: &str, name: &str) -> String {
    let kept: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let plain = format!("{upstream}{SEPARATOR}{kept}");
    if kept == name && plain.len() <= MAX_OFFERED_NAME {
        return plain;
    }
    let tag = tessera_state::digest_hex(name.as_bytes(), 4);
    let room = MAX_OFFERED_NAME - tag.len() - 1;
    // Only ASCII is left, so any length is a character boundary.
    let head = &plain[..plain.len().min(room)];
    format!("{head}_{tag}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(name: &str) -> bool {
        name.len() <= MAX_OFFERED_NAME
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    #[test]
    fn every_name_is_one_every_model_api_accepts_and_names_stay_apart() {
        let names = [
            "plain",
            "with.dot",
            "with/slash",
            "with_dot",
            "ünïcödé",
            "spaces in it",
            &"long".repeat(40),
            &"long".repeat(41),
            "",
        ];
        let offered: Vec<String> = names.iter().map(|n| offered_name("up-1", n)).collect();
        for (name, o) in names.iter().zip(&offered) {
            assert!(allowed(o), "{name:?} -> {o:?}");
            assert!(o.starts_with("up-1__"), "{o}");
        }
        let mut unique = offered.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), offered.len(), "{offered:?}");
    }
}
