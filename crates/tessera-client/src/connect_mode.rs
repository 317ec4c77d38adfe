//! Which protocol era a client speaks to a stdio server.

/// How a client settles a stdio server's protocol era (HTTP servers are always 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConnectMode {
    /// Probe with `server/discover` and fall back to `initialize` when the
    /// server answers with anything but a 2026-07-28 result or version error,
    /// or stays silent (the stdio binding's backward-compatibility rule).
    #[default]
    Auto,
    /// 2026-07-28 without probing.
    Modern,
    /// The `initialize` handshake without probing. The server pushes its
    /// questions; each reaches the [`Elicitor`](crate::Elicitor) under the key
    /// Tessera's era bridge names in `_meta` (`dev.tessera/inputKey`), or
    /// `elicitation` (`sampling`, `roots`) from a server that names none.
    Legacy,
}
