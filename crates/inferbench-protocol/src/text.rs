//! Small text helpers shared by the crates that report what a peer sent.

/// The longest an [`excerpt`] keeps, in bytes (then cut back to a character boundary).
pub const EXCERPT_BYTES: usize = 300;

/// The start of `s` for an error message or a record: at most [`EXCERPT_BYTES`] bytes, cut
/// on a character boundary, with `…` when something was cut.
pub fn excerpt(s: &str) -> String {
    if s.len() <= EXCERPT_BYTES {
        return s.to_string();
    }
    let mut end = EXCERPT_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(excerpt(""), "");
        let exact = "a".repeat(300);
        assert_eq!(excerpt(&exact), exact);
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary() {
        // 299 ASCII bytes then 'é' (2 bytes) straddles byte 300: the cut falls before it.
        let s = format!("{}é tail", "a".repeat(299));
        assert_eq!(excerpt(&s), format!("{}…", "a".repeat(299)));
        // 301 ASCII bytes: cut at exactly 300.
        let s = "b".repeat(301);
        assert_eq!(excerpt(&s), format!("{}…", "b".repeat(300)));
    }
}
