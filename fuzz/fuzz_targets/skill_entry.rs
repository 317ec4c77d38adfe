//! What a host reads of a skill: whatever `SKILL.md` says, its frontmatter
//! is read or refused (no panic, bounded work), and a frontmatter read has
//! a non-empty `name` and `description`; whatever a `skills/list` entry
//! says, the host's check accepts only a manifest confined to the skill's
//! directory, within the limits, without overflowing a sum.
//!
//! Run with `scripts/fuzz` (or `cargo +nightly fuzz run skill_entry`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_protocol::{SkillEntry, checked_manifest, manifest_bytes, skill_frontmatter};

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Ok(frontmatter) = skill_frontmatter(text) {
        for field in ["name", "description"] {
            assert!(frontmatter[field].as_str().is_some_and(|s| !s.is_empty()));
        }
    }
    if let Ok(entry) = serde_json::from_str::<SkillEntry>(text)
        && let Ok(files) = checked_manifest(&entry)
    {
        let root = entry.uri.strip_suffix("/SKILL.md").expect("a SKILL.md uri");
        assert!(manifest_bytes(files).is_some_and(|b| b <= tessera_protocol::MAX_SKILL_BYTES));
        for file in files {
            assert!(file.uri == entry.uri || file.uri.starts_with(&format!("{root}/")));
            assert!(!file.uri.split('/').any(|s| s == ".."));
        }
    }
});
