//! Resource templates against URIs: whatever the template and the URI,
//! matching ends (no panic, bounded work), and outside reserved expansion
//! (`{+var}`, `{#var}`) no value that reaches a handler is `.` or `..` or
//! contains `/`, `\` or a control character.
//!
//! Run with `scripts/fuzz` (or `cargo +nightly fuzz run uri_template`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_server::{Context, ResourceTemplateDef, TemplateVariables};

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let def = ResourceTemplateDef::new(template, "t", |_: Context, _: TemplateVariables| async {
        String::new()
    });
    let Some(vars) = def.matches(uri) else {
        return;
    };
    let reserved = template.contains("{+") || template.contains("{#");
    if !reserved {
        for (name, value) in &vars {
            let segments_of = template.contains(&format!("{name}*"));
            let unsafe_char = |c: char| c == '\\' || c.is_control() || (!segments_of && c == '/');
            let bad = value == "." || value == ".." || value.contains(unsafe_char);
            assert!(!bad, "{template} matched {uri} with {name} = {value:?}");
        }
    }
});
