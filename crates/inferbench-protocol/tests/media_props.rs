//! Property tests of the media helpers: the multipart reader never panics and reads back
//! every form the writer makes; base64 sizes are computed without decoding.

use base64::Engine as _;
use inferbench_protocol::multipart::{BOUNDARY, form_body, parse_form};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

proptest! {
    #[test]
    fn parse_form_never_panics(body in prop::collection::vec(any::<u8>(), 0..400), b in "[a-zA-Z0-9-]{0,12}") {
        let _ = parse_form(&body, &b);
        let mut with_prefix = format!("--{b}\r\n").into_bytes();
        with_prefix.extend_from_slice(&body);
        let _ = parse_form(&with_prefix, &b);
    }

    #[test]
    fn every_form_written_is_read_back(
        file in prop::collection::vec(any::<u8>(), 0..300),
        fields in prop::collection::vec(("[a-z_]{1,8}", "[ -~]{0,20}"), 0..4),
    ) {
        let mut body = Map::new();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&file);
        body.insert("file".into(), json!({"b64_data": b64, "filename": "a.wav", "content_type": "audio/wav"}));
        for (k, v) in &fields {
            if k != "file" {
                body.insert(k.clone(), Value::from(v.clone()));
            }
        }
        let form = form_body(&body).unwrap();
        let parts = parse_form(&form, BOUNDARY).unwrap();
        prop_assert_eq!(parts.len(), body.len());
        prop_assert_eq!(parts[0].name, "file");
        prop_assert_eq!(parts[0].data, &file[..]);
        for (p, (k, v)) in parts.iter().zip(body.iter()).skip(1) {
            prop_assert_eq!(p.name, k.as_str());
            prop_assert_eq!(p.data, v.as_str().unwrap().as_bytes());
        }
    }

    #[test]
    fn base64_sizes_match_the_decoded_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let padded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let bare = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        prop_assert_eq!(inferbench_protocol::media::b64_decoded_len(&padded), bytes.len() as u64);
        prop_assert_eq!(inferbench_protocol::media::b64_decoded_len(&bare), bytes.len() as u64);
    }
}
