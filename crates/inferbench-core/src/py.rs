//! Python's text forms that AIPerf's files carry (its CSV label columns, its sweep keys).

/// AIPerf's `_normalize_name` for its enum values and plugin names: lowercase, `-` as `_`,
/// so `ROUND-ROBIN`, `round_robin` and `Round-Robin` name one value.
pub fn enum_name(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('-', "_")
}

/// Python's `repr(str)`: single quotes unless the text has a `'` and no `"`; backslash,
/// newline, tab, carriage return and the quote escaped; other control characters as `\xNN`.
pub fn str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_names_normalize_as_aiperf_does() {
        for s in ["ROUND-ROBIN", "round_robin", " Round-Robin ", "ROUND_ROBIN"] {
            assert_eq!(enum_name(s), "round_robin", "{s:?}");
        }
        assert_eq!(enum_name("sticky-user-sessions"), "sticky_user_sessions");
    }

    #[test]
    fn quotes_and_escapes_as_python_does() {
        // repr("a'b") == "\"a'b\"", repr('a"b') == "'a\"b'", repr("x\ty") == "'x\\ty'"
        assert_eq!(str_repr("a'b"), "\"a'b\"");
        assert_eq!(str_repr("a\"b"), "'a\"b'");
        assert_eq!(str_repr("x\ty"), "'x\\ty'");
        assert_eq!(str_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(str_repr("\u{1}"), "'\\x01'");
    }
}
