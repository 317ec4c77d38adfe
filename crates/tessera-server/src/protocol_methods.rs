//! The protocol's method names this server answers, in one list for every
//! layer that must tell a known method from a made-up one.

/// The protocol's methods the method table answers (in one era or
/// the other): layers that keep something per method name (rate-limit
/// buckets, metrics) name any other one as unknown, so a client cannot make
/// up keys.
pub(crate) const PROTOCOL_METHODS: &[&str] = &[
    "server/discover",
    "initialize",
    "ping",
    "logging/setLevel",
    tessera_protocol::SUBSCRIPTIONS_LISTEN,
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    tessera_protocol::TASKS_GET,
    tessera_protocol::TASKS_UPDATE,
    tessera_protocol::TASKS_CANCEL,
    tessera_protocol::SKILLS_LIST,
    tessera_protocol::SKILLS_GET,
    tessera_protocol::RESOURCES_DIRECTORY_READ,
];
