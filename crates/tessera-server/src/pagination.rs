//! Opaque list cursors.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::ServerError;

/// The cursor for the page starting at `offset`.
pub(crate) fn cursor_for(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("o:{offset}"))
}

/// The offset a cursor names, or -32602 for anything we did not issue.
pub(crate) fn offset_of(cursor: Option<&str>, len: usize) -> Result<usize, ServerError> {
    let Some(cursor) = cursor else { return Ok(0) };
    let invalid = || {
        ServerError::invalid_params(format!(
            "Invalid cursor {cursor:?}: pass a nextCursor from a previous page"
        ))
    };
    let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let text = std::str::from_utf8(&raw).map_err(|_| invalid())?;
    let offset: usize = text
        .strip_prefix("o:")
        .and_then(|n| n.parse().ok())
        .ok_or_else(invalid)?;
    if offset > len {
        return Err(invalid());
    }
    Ok(offset)
}

/// One page of `items` starting at `offset`, and the next cursor.
pub(crate) fn page<T: Clone>(
    items: impl Iterator<Item = T>,
    offset: usize,
    size: usize,
    len: usize,
) -> (Vec<T>, Option<String>) {
    let page: Vec<T> = items.skip(offset).take(size).collect();
    let next = (offset + page.len() < len).then(|| cursor_for(offset + page.len()));
    (page, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        assert_eq!(offset_of(Some(&cursor_for(3)), 10).unwrap(), 3);
        assert_eq!(offset_of(None, 10).unwrap(), 0);
        assert!(offset_of(Some("garbage!"), 10).is_err());
        assert!(offset_of(Some(&cursor_for(11)), 10).is_err());
        let (p, next) = page(0..5, 0, 2, 5);
        assert_eq!(p, vec![0, 1]);
        assert_eq!(offset_of(next.as_deref(), 5).unwrap(), 2);
        let (p, next) = page(0..5, 4, 2, 5);
        assert_eq!((p, next), (vec![4], None));
    }
}
