//! JSON primitives written straight into a byte buffer, byte for byte as `serde_json`
//! (compact) writes them, for the two lines written once per request (the evidence record,
//! `profile_export.jsonl`). serde's derived serializers cost a call per field and escape every
//! string byte by byte through a table; here a string with nothing to escape, the usual case,
//! is one copy. The tests compare every function with `serde_json` on arbitrary values.

/// `"s"`, escaped as serde_json escapes: `"` and `\` with a backslash, the control bytes below
/// 0x20 as `\b \t \n \f \r` or `\u00xx` (lowercase hex); everything else, DEL and non-ASCII
/// included, as it is.
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let b = s.as_bytes();
    if needs_no_escape(b) {
        out.extend_from_slice(b);
    } else {
        escape_into(out, b);
    }
    out.push(b'"');
}

fn needs_escape(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// Whether no byte needs escaping; 16 bytes at a time without an early exit, which the
/// compiler turns into vector compares.
fn needs_no_escape(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(16);
    for c in chunks.by_ref() {
        if c.iter().fold(false, |acc, &x| acc | needs_escape(x)) {
            return false;
        }
    }
    !chunks.remainder().iter().any(|&x| needs_escape(x))
}

fn escape_into(out: &mut Vec<u8>, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if !needs_escape(c) {
            continue;
        }
        out.extend_from_slice(&b[start..i]);
        start = i + 1;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0A => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            0x0D => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xF)],
            ]),
        }
    }
    out.extend_from_slice(&b[start..]);
}

/// An unsigned or signed integer, as serde_json writes it (itoa).
pub(crate) fn int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// A float as serde_json writes it: the shortest round-trip form (zmij), `null` when not
/// finite.
pub(crate) fn float(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        out.extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

pub(crate) fn boolean(out: &mut Vec<u8>, v: bool) {
    out.extend_from_slice(if v { b"true" } else { b"false" });
}

/// `,"key":` (or `"key":` as an object's first key): keys here are fixed ASCII names that
/// need no escaping, which a test checks for every key the line writers use.
pub(crate) fn key(out: &mut Vec<u8>, first: bool, k: &str) {
    debug_assert!(!k.bytes().any(needs_escape));
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

/// `,"key":` and an integer.
pub(crate) fn field_int(out: &mut Vec<u8>, k: &str, v: impl itoa::Integer) {
    key(out, false, k);
    int(out, v);
}

/// `,"key":` and a string.
pub(crate) fn field_str(out: &mut Vec<u8>, k: &str, v: &str) {
    key(out, false, k);
    string(out, v);
}

/// `,"key":` and a boolean.
pub(crate) fn field_bool(out: &mut Vec<u8>, k: &str, v: bool) {
    key(out, false, k);
    boolean(out, v);
}

/// `,"key":` and the integer, or nothing when there is none (serde's
/// `skip_serializing_if = "Option::is_none"`).
pub(crate) fn opt_int(out: &mut Vec<u8>, k: &str, v: Option<impl itoa::Integer>) {
    if let Some(v) = v {
        field_int(out, k, v);
    }
}

/// `,"key":` and the string, or nothing when there is none.
pub(crate) fn opt_str(out: &mut Vec<u8>, k: &str, v: Option<&str>) {
    if let Some(v) = v {
        field_str(out, k, v);
    }
}

/// `,"key":` and the value through serde_json, or nothing when there is none.
pub(crate) fn opt_serde<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, k: &str, v: Option<&T>) {
    if let Some(v) = v {
        key(out, false, k);
        via_serde(out, v);
    }
}

/// Any other value through serde_json itself (the rare, nested parts of a line).
pub(crate) fn via_serde<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    // Writing into a Vec cannot fail, and the values written this way have string keys.
    serde_json::to_writer(&mut *out, v).expect("serializing to memory");
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_control_byte_quote_and_backslash_escape_as_serde() {
        for c in (0u8..0x80).map(char::from) {
            let s = format!("a{c}b{c}");
            assert_eq!(
                ours(|o| string(o, &s)),
                serde_json::to_string(&s).unwrap(),
                "{c:?}"
            );
        }
        // Worked by hand: a tab, a quote, a backslash, a 0x01 and a DEL (left as it is).
        assert_eq!(
            ours(|o| string(o, "\t\"\\\u{1}\u{7f}")),
            "\"\\t\\\"\\\\\\u0001\u{7f}\""
        );
    }

    #[test]
    fn long_strings_escape_in_every_chunk_position() {
        // The escape-free test reads 16 bytes at a time: an escape at each position of the
        // first two chunks and of the remainder must still be found.
        for len in [15, 16, 17, 31, 32, 33, 47] {
            for at in 0..len {
                let mut s: Vec<char> = std::iter::repeat_n('x', len).collect();
                s[at] = '\n';
                let s: String = s.into_iter().collect();
                assert_eq!(ours(|o| string(o, &s)), serde_json::to_string(&s).unwrap());
            }
        }
    }

    #[test]
    fn floats_and_integers_as_serde() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            3.012279,
            1e21,
            1e-7,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(ours(|o| float(o, v)), serde_json::to_string(&v).unwrap());
        }
        assert_eq!(ours(|o| int(o, u64::MAX)), u64::MAX.to_string());
        assert_eq!(ours(|o| int(o, i64::MIN)), i64::MIN.to_string());
        assert_eq!(ours(|o| boolean(o, true)), "true");
        assert_eq!(ours(|o| key(o, false, "a")), ",\"a\":");
    }

    proptest! {
        #[test]
        fn any_string_escapes_as_serde(s in any::<String>(), ctl in "[\\x00-\\x1f\"\\\\a-z]{0,40}") {
            prop_assert_eq!(ours(|o| string(o, &s)), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(ours(|o| string(o, &ctl)), serde_json::to_string(&ctl).unwrap());
        }

        #[test]
        fn any_float_formats_as_serde(bits in any::<u64>(), x in any::<f64>()) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(ours(|o| float(o, v)), serde_json::to_string(&v).unwrap());
            prop_assert_eq!(ours(|o| float(o, x)), serde_json::to_string(&x).unwrap());
        }
    }
}
