//! The naming rules of `_meta` keys, which extension identifiers follow too.
//!
//! Written here rather than as a regular expression: the grammar is two
//! short segments, and the checker runs at build time only.

/// Whether `key` is a valid `_meta` key, with a prefix when `prefix_required`
/// (extension identifiers such as `io.modelcontextprotocol/ui` must have one).
///
/// The schema's `MetaObject`: a prefix is "a series of labels separated by
/// dots, followed by a slash"; "labels MUST start with a letter and end with
/// a letter or digit", interior characters letters, digits or hyphens; the
/// name, "unless empty, MUST start and end with an alphanumeric character",
/// interior characters alphanumerics, hyphens, underscores or dots.
///
/// ```
/// use tessera_protocol::check_meta_key;
///
/// assert!(check_meta_key("ui", false).is_ok());
/// assert!(check_meta_key("io.modelcontextprotocol/ui", true).is_ok());
/// assert!(check_meta_key("ui", true).is_err());
/// assert!(check_meta_key("com.example/-x", false).is_err());
/// ```
pub fn check_meta_key(key: &str, prefix_required: bool) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    match prefix {
        Some(prefix) => {
            if let Some(label) = prefix.split('.').find(|l| !is_label(l)) {
                return Err(format!(
                    "{key:?}: prefix label {label:?} must start with a letter, end with a letter or \
                     digit, and hold only letters, digits and hyphens"
                ));
            }
        }
        None if prefix_required => {
            return Err(format!(
                "{key:?} needs a prefix, in reverse DNS notation: e.g. \"com.example/{key}\""
            ));
        }
        None => {}
    }
    let edges_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let name_ok = name.is_empty()
        || (edges_ok(name.chars().next())
            && edges_ok(name.chars().last())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')));
    if name_ok {
        Ok(())
    } else {
        Err(format!(
            "{key:?}: the name after the prefix must start and end with a letter or digit, and hold \
             only letters, digits, '-', '_' and '.'"
        ))
    }
}

fn is_label(label: &str) -> bool {
    let mut chars = label.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && label
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::check_meta_key;

    #[test]
    fn the_schema_examples_and_their_edges() {
        for ok in [
            "ui",
            "ui/resourceUri",
            "io.modelcontextprotocol/tasks",
            "com.example.mcp/x_y.z",
            "dev.mcp/",
            "a1/b",
        ] {
            assert!(check_meta_key(ok, false).is_ok(), "{ok}");
        }
        for bad in [
            "1a/b",
            "a-/b",
            "a..b/c",
            "/name",
            "com.example/_x",
            "com.example/x_",
            "x y",
        ] {
            assert!(check_meta_key(bad, false).is_err(), "{bad}");
        }
        assert!(
            check_meta_key("tasks", true)
                .unwrap_err()
                .contains("com.example/tasks")
        );
    }
}
