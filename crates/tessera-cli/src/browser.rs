//! Opening a page for the user: `$BROWSER` when set (a command, its words
//! split at spaces, the URL added last), else the platform's opener as the
//! `open` crate finds it (`open` on macOS, `start` on Windows, `xdg-open`,
//! `gio` or WSL's `wslview` elsewhere). Callers decide whether a
//! URL may be opened at all (the sign-in's own URL; a URL-mode request only
//! after a yes, and only http(s)).

use std::process::{Command, Stdio};

/// Starts the browser on `url`, detached from the terminal; says whether one started.
pub fn open(url: &str) -> bool {
    let Some(browser) = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        return ::open::that_detached(url).is_ok();
    };
    let mut words = browser.split_whitespace();
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
