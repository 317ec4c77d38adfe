//! Tiny media samples the content tools, prompts and resources hand out.

/// A 1×1 PNG, base64-encoded.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// A WAV file of eight silent 8-bit samples at 8 kHz, base64-encoded.
pub const WAV_BASE64: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";
