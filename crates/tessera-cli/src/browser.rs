//! Opening a page for the user: `$BROWSER` when set, else the platform's
//! opener (`open` on macOS, `xdg-open` elsewhere). Callers decide whether a
//! URL may be opened at all (the sign-in's own URL; a URL-mode request only
//! after a yes, and only http(s)).

use std::process::{Command, Stdio};

/// Starts the browser on `url`, detached from the terminal; says whether one started.
pub fn open(url: &str) -> bool {
    let opener = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            }
            .to_owned()
        });
    let mut words = opener.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    Command::new(program)
        .args(words)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}
