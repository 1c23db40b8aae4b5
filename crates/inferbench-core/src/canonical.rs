//! Canonical JSON (RFC 8785: sorted keys, ECMAScript number form, no insignificant
//! whitespace) and the `sha256:<hex>` digests taken over it. The ledger's content ids and
//! chain hashes and the epoch fingerprint all use this one rule, so equal content always
//! hashes equal whatever order its keys were built in.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// RFC 8785 bytes of `value`. Fails only for values JSON cannot hold (a NaN, a map with
/// non-string keys).
pub fn to_vec<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| format!("canonical JSON: {e}"))
}

/// RFC 8785 text of `value`.
pub fn to_string<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json_canonicalizer::to_string(value).map_err(|e| format!("canonical JSON: {e}"))
}

/// `sha256:<64 lowercase hex>` of some bytes.
pub fn sha256_id(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// `sha256:<hex>` of the canonical form of `value`.
pub fn digest<T: Serialize>(value: &T) -> Result<String, String> {
    Ok(sha256_id(&to_vec(value)?))
}

/// True for `sha256:` followed by exactly 64 lowercase hex digits.
pub fn is_sha256_id(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_and_whitespace_dropped() {
        // RFC 8785 §3.2.3: keys sort by UTF-16 code units; numbers in ECMAScript form.
        let v = json!({"b": 1, "a": [1.0, 2.5, 1e21], "c": {"y": "é", "x": null}});
        assert_eq!(
            to_string(&v).unwrap(),
            r#"{"a":[1,2.5,1e+21],"b":1,"c":{"x":null,"y":"é"}}"#
        );
    }

    #[test]
    fn equal_content_in_any_key_order_hashes_equal() {
        let a = json!({"x": 1, "y": [true, "s"]});
        let b: serde_json::Value = serde_json::from_str(r#"{"y":[true,"s"],"x":1}"#).unwrap();
        assert_eq!(digest(&a).unwrap(), digest(&b).unwrap());
        // SHA-256 of the two bytes `{}`, computed with sha256sum.
        assert_eq!(
            digest(&json!({})).unwrap(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn recognises_ids() {
        assert!(is_sha256_id(&sha256_id(b"x")));
        assert!(!is_sha256_id("sha256:ABC"));
        assert!(!is_sha256_id("sha1:0000"));
    }
}
