//! Header values on the Streamable HTTP transport: plain, or `=?base64?…?=`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// A header value as the spec's Value Encoding requires: plain when it is
/// visible ASCII (inner spaces allowed) without leading or trailing spaces,
/// else `=?base64?…?=` of its UTF-8 bytes — also when it looks like that form.
pub fn encode_header_value(value: &str) -> String {
    let looks_encoded = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !looks_encoded;
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(value.as_bytes()))
    }
}

/// Decodes a header value: the `=?base64?…?=` form to its text (standard
/// alphabet, padded: anything else is refused), a plain value as it is.
pub fn decode_header_value(value: &str) -> Result<String, String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        None => Ok(value.to_owned()),
        Some(encoded) => {
            // Strict: the standard alphabet with its padding.
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|_| format!("the value {value:?} is not valid base64"))?;
            String::from_utf8(bytes)
                .map_err(|_| format!("the value {value:?} does not decode to UTF-8"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_table_round_trips() {
        let table = [
            ("us-west1", "us-west1"),
            ("us west 1", "us west 1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("\tindented", "=?base64?CWluZGVudGVk?="),
            ("", ""),
        ];
        for (text, header) in table {
            assert_eq!(encode_header_value(text), header);
            assert_eq!(decode_header_value(header).unwrap(), text);
        }
        assert_eq!(
            decode_header_value("=?base64?aW5jcmVhc2UtY291bnRlcg==?=").unwrap(),
            "increase-counter"
        );
        assert!(decode_header_value("=?base64?!!!?=").is_err());
    }
}
