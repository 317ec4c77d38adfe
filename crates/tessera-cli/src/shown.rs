//! The one rule for printing what a server sent: control characters, escape
//! sequences and the invisible characters that reorder or hide text are shown
//! escaped (`\u{1b}`), never handed to the terminal to interpret.
//!
//! Every string that came from a server (tool descriptions, results,
//! progress, error messages, form labels, help, options, defaults, URLs, the
//! sign-in's error descriptions) goes through [`text`] or [`line`] before it
//! is printed, and JSON printed whole through [`json`].

use std::borrow::Cow;
use std::fmt::Write;

/// `s` as it may be printed: newlines and tabs kept.
pub fn text(s: &str) -> Cow<'_, str> {
    escaped(s, |c| c == '\n' || c == '\t')
}

/// `s` as it may be printed on one line: newlines escaped too.
pub fn line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// JSON text (as serde_json writes it) as it may be printed: the characters
/// serde_json leaves as themselves (DEL, C1 controls, the invisible ones)
/// written as `\uXXXX` escapes, so the JSON stays valid and means the same.
/// Newlines are kept: serde_json writes them only between values (pretty
/// printing), never inside a string.
pub fn json(s: &str) -> Cow<'_, str> {
    let escape = |c: char| c != '\n' && dangerous(c);
    if !s.chars().any(escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escape(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `c` must not reach a terminal as itself.
fn dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c,
            // Bidirectional marks, embeddings, overrides and isolates.
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            // Line and paragraph separators.
            | '\u{2028}' | '\u{2029}'
            // Zero-width characters, invisible operators, the byte-order mark.
            | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
            // Tag characters (invisible text).
            | '\u{e0000}'..='\u{e007f}'
        )
}

fn escaped(s: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| dangerous(c) && !kept(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if dangerous(c) && !kept(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_never_sent() {
        assert_eq!(text("plain text\nline two"), "plain text\nline two");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(
            text("\x1b]0;pwned\x07\x1b[2Jred\r"),
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[2Jred\\u{d}"
        );
        assert_eq!(line("a\nb"), "a\\u{a}b");
        assert_eq!(text("\u{9b}31m"), "\\u{9b}31m", "C1 CSI");
        assert_eq!(text("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(text("a\u{200b}b\u{e0041}"), "a\\u{200b}b\\u{e0041}");
    }

    #[test]
    fn json_stays_json() {
        let printed =
            serde_json::json!({"t": "x\u{7f}\u{9b}31m\u{202e}\u{e0041}\u{1b}"}).to_string();
        let shown = json(&printed);
        assert!(!shown.chars().any(dangerous), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["t"], "x\u{7f}\u{9b}31m\u{202e}\u{e0041}\u{1b}");
        assert!(matches!(json(r#"{"a":1}"#), Cow::Borrowed(_)));
        let pretty = serde_json::to_string_pretty(&serde_json::json!({"t": "a\nb\u{9b}"})).unwrap();
        let shown = json(&pretty);
        assert!(shown.contains('\n'), "layout kept");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["t"], "a\nb\u{9b}");
    }
}
