use super::*;
use proptest::prelude::*;
use serde_json::json;

fn stamp() -> Stamp {
    Stamp {
        at: "2026-12-01T12:00:00Z".into(),
        by: "tester".into(),
    }
}

#[test]
fn a_sealed_entry_digests_its_body_and_itself() {
    let body = json!({"b": 2, "a": "x"});
    let e = Entry::seal(None, "run.classify", &stamp(), body).unwrap();
    assert_eq!(e.seq, 1);
    assert_eq!(e.prev, GENESIS);
    // The canonical body is `{"a":"x","b":2}` (sorted keys); its digest is the cid.
    assert_eq!(e.cid, canonical::sha256_id(br#"{"a":"x","b":2}"#));
    // The hash covers every field but itself, canonically: rebuild that text by hand.
    let without_hash = format!(
        r#"{{"at":"2026-12-01T12:00:00Z","body":{{"a":"x","b":2}},"by":"tester","cid":"{}","kind":"run.classify","prev":"{GENESIS}","seq":1,"v":1}}"#,
        e.cid
    );
    assert_eq!(e.hash, canonical::sha256_id(without_hash.as_bytes()));
    let next = Entry::seal(Some((e.seq, &e.hash)), "amend", &stamp(), json!({})).unwrap();
    assert_eq!((next.seq, next.prev.as_str()), (2, e.hash.as_str()));
}

#[test]
fn a_line_round_trips() {
    let e = Entry::seal(None, "ledger.init", &stamp(), json!({"format": 1})).unwrap();
    let line = e.to_line().unwrap();
    assert_eq!(parse_line(line.as_bytes(), 1).unwrap(), e);
}

#[test]
fn errors_name_the_line_and_the_field() {
    let e = Entry::seal(None, "ledger.init", &stamp(), json!({"format": 1})).unwrap();
    let good: Value = serde_json::to_value(&e).unwrap();
    let with = |f: &str, v: Value| {
        let mut o = good.clone();
        o[f] = v;
        serde_json::to_vec(&o).unwrap()
    };
    let cases = [
        (with("seq", json!(-1)), "seq"),
        (with("prev", json!("sha256:abc")), "prev"),
        (with("kind", json!("run.erase")), "kind"),
        (with("at", json!("yesterday")), "at"),
        (with("body", json!([1])), "body"),
        (with("cid", json!(7)), "cid"),
        (with("extra", json!(1)), "extra"),
    ];
    for (bytes, field) in cases {
        let err = parse_line(&bytes, 7).unwrap_err();
        assert_eq!((err.line, err.field.as_str()), (7, field), "{err}");
    }
    let err = parse_line(b"{\"v\":1", 3).unwrap_err();
    assert_eq!((err.line, err.field.as_str()), (3, "line"));
    let err = parse_line(&[0xff, 0xfe], 4).unwrap_err();
    assert!(
        err.to_string().starts_with("line 4: line: not UTF-8"),
        "{err}"
    );
}

#[test]
fn a_newer_format_is_refused_naming_the_version() {
    let e = Entry::seal(None, "ledger.init", &stamp(), json!({})).unwrap();
    let mut v = serde_json::to_value(&e).unwrap();
    v["v"] = json!(2);
    // Even with a field this build does not know: the version is checked first.
    v["signature"] = json!("x");
    let err = parse_line(&serde_json::to_vec(&v).unwrap(), 12).unwrap_err();
    assert_eq!(err.field, "v");
    assert_eq!(
        err.to_string(),
        "line 12: v: format version 2 is newer than this build reads (1): upgrade inferbench"
    );
}

#[test]
fn rfc3339_shapes() {
    assert!(is_rfc3339_utc("2026-12-01T12:00:00Z"));
    assert!(is_rfc3339_utc("2026-12-01T12:00:00.123Z"));
    assert!(!is_rfc3339_utc("2026-12-01T12:00:00"));
    assert!(!is_rfc3339_utc("2026-12-01 12:00:00Z"));
    assert!(!is_rfc3339_utc("2026-12-01T12:00:00.Z"));
    assert!(!is_rfc3339_utc("2026-12-01T12:00:00+01:00"));
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        "[ -~é☃]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), n in 1usize..10_000) {
        if let Err(e) = parse_line(&bytes, n) {
            prop_assert_eq!(e.line, n);
        }
    }

    #[test]
    fn any_valid_entry_round_trips(
        body in prop::collection::btree_map("[a-z]{1,8}", arb_json(), 0..5),
        kind in prop::sample::select(KINDS.to_vec()),
        by in "[ -~]{0,16}",
        seq in 0u64..1_000_000,
    ) {
        let body = Value::Object(body.into_iter().collect());
        let prev = format!("sha256:{}", "ab".repeat(32));
        let e = Entry::seal(Some((seq, &prev)), kind, &Stamp { at: "2026-01-02T03:04:05Z".into(), by }, body).unwrap();
        let line = e.to_line().unwrap();
        let back = parse_line(line.as_bytes(), 1).unwrap();
        prop_assert_eq!(back.expected_cid().unwrap(), e.cid.clone());
        prop_assert_eq!(back.expected_hash().unwrap(), e.hash.clone());
        prop_assert_eq!(back.to_line().unwrap(), line);
    }

    #[test]
    fn a_valid_line_mutated_anywhere_never_panics(pos in 0usize..400, byte in any::<u8>()) {
        let e = Entry::seal(None, "ledger.init", &stamp(), json!({"format": 1, "tool": "x"})).unwrap();
        let mut line = e.to_line().unwrap().into_bytes();
        let p = pos % line.len();
        line[p] = byte;
        let _ = parse_line(&line, 1);
    }
}
