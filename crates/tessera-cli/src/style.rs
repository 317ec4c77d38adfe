//! The look of the terminal forms: inquire's render configuration for the
//! prompts, and the same emphasis for the lines printed around them, through
//! crossterm (which inquire draws with) rather than escape codes written by
//! hand. Only our own emphasis is styled; text from a server always goes
//! through [`shown`](crate::shown) first.

use crossterm::style::{StyledContent, Stylize};
use inquire::ui::{Color, RenderConfig, StyleSheet, Styled};

/// The render configuration every prompt uses.
pub fn render_config() -> RenderConfig<'static> {
    RenderConfig::default()
        .with_prompt_prefix(Styled::new("?").with_fg(Color::LightCyan))
        .with_answered_prompt_prefix(Styled::new("✓").with_fg(Color::LightGreen))
        .with_highlighted_option_prefix(Styled::new("›").with_fg(Color::LightCyan))
        .with_help_message(StyleSheet::new().with_fg(Color::DarkGrey))
}

/// Who asks (the place the user connected to), emphasised.
pub fn asker(shown: &str) -> StyledContent<&str> {
    shown.bold()
}

/// A host the user must check before a page opens, set apart from the rest of the URL.
pub fn host(shown: &str) -> StyledContent<&str> {
    shown.bold().yellow()
}
