use super::*;
use serde_json::json;

/// Every catalogue pin known, as measured or declared, with value `"v"`.
fn full() -> Identity {
    let mut id = Identity::default();
    for s in CATALOGUE {
        id.set(s.name, json!("v"), Provenance::Measured);
    }
    id
}

fn with(mut id: Identity, name: &str, v: Value) -> Identity {
    id.set(name, v, Provenance::Measured);
    id
}

#[test]
fn catalogue_names_are_unique_and_snake_case() {
    let mut seen = std::collections::HashSet::new();
    for s in CATALOGUE {
        assert!(seen.insert(s.name), "{} twice", s.name);
        assert!(s.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    }
}

#[test]
fn equal_identities_keep_the_legacy_baseline() {
    let r = decide(&diff(&full(), &full()));
    assert_eq!(r.decision, Decision::KeepLegacy);
    assert!(r.deciding.is_empty());
}

#[test]
fn a_new_image_is_a_comparison_inside_the_epoch() {
    let cand = with(full(), "image_digest", json!("sha256:other"));
    let r = decide(&diff(&full(), &cand));
    assert_eq!(r.decision, Decision::Compare);
    assert_eq!(r.deciding.len(), 1);
    assert_eq!(r.deciding[0].name, "image_digest");
    assert_eq!(full().fingerprint(), cand.fingerprint());
}

#[test]
fn a_harness_change_with_the_server_fixed_is_a_bridge() {
    let cand = with(
        with(full(), "harness", json!("aiperf 0.13.0")),
        "client_binary_digest",
        json!("x"),
    );
    let r = decide(&diff(&full(), &cand));
    assert_eq!(r.decision, Decision::Bridge);
    // The client pin changed too but decides nothing.
    assert_eq!(
        r.deciding
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["harness"]
    );
    assert_ne!(full().fingerprint(), cand.fingerprint());
}

#[test]
fn a_harness_change_and_a_server_change_together_are_a_new_epoch() {
    let cand = with(
        with(full(), "parser", json!("p2")),
        "precision",
        json!("fp8"),
    );
    assert_eq!(decide(&diff(&full(), &cand)).decision, Decision::NewEpoch);
}

#[test]
fn a_workload_change_is_a_new_epoch_whatever_else() {
    let cand = with(
        with(full(), "workload_digest", json!("sha256:b")),
        "harness",
        json!("h2"),
    );
    let r = decide(&diff(&full(), &cand));
    assert_eq!(r.decision, Decision::NewEpoch);
    assert_eq!(r.deciding[0].name, "workload_digest");
}

#[test]
fn an_unknown_contract_pin_is_insufficient_even_when_unknown_on_both_sides() {
    let mut a = full();
    a.pins.remove("cache_procedure");
    let mut b = full();
    b.pins.remove("cache_procedure");
    let r = decide(&diff(&a, &b));
    assert_eq!(r.decision, Decision::Insufficient);
    assert!(r.reason.contains("cache_procedure"));
}

#[test]
fn fingerprint_ignores_provenance_and_sut_pins() {
    let mut a = full();
    a.set(
        "workload_digest",
        json!("v"),
        Provenance::Recovered {
            file: "inputs.json".into(),
            key: "data".into(),
        },
    );
    let b = with(full(), "gpu_driver", json!("570"));
    assert_eq!(a.fingerprint(), full().fingerprint());
    assert_eq!(b.fingerprint(), full().fingerprint());
}

#[test]
fn declarations_are_checked_against_the_catalogue() {
    let mut id = Identity::default();
    id.set(
        "chat_template_digest",
        json!("sha256:a"),
        Provenance::Measured,
    );
    let e = id
        .declare("imag_digest", json!("x"), "--declare")
        .unwrap_err();
    assert!(
        e.0.starts_with("--declare: unknown identity key 'imag_digest'"),
        "{e}"
    );
    assert!(e.0.contains("image_digest"));
    let e = id
        .declare("workload_digest", json!("x"), "--declare")
        .unwrap_err();
    assert!(e.0.contains("measured by the run"), "{e}");
    let e = id
        .declare("chat_template_digest", json!("sha256:b"), "id.toml")
        .unwrap_err();
    assert!(
        e.0.starts_with("id.toml: 'chat_template_digest' declared as"),
        "{e}"
    );
    id.declare("chat_template_digest", json!("sha256:a"), "id.toml")
        .unwrap();
    id.declare("note.ticket", json!("OPS-12"), "--declare")
        .unwrap();
    assert!(id.declare("note.", json!("x"), "--declare").is_err());
    id.declare("precision", json!("fp8"), "--declare").unwrap();
    assert_eq!(
        id.get("precision").unwrap().provenance,
        Provenance::Declared {
            route: "--declare".into()
        }
    );
}

#[test]
fn finish_lists_the_missing_and_flags_a_bare_tag() {
    let mut id = Identity::default();
    id.declare("image", json!("vllm/vllm-openai:latest"), "--declare")
        .unwrap();
    id.finish("not recorded");
    assert_eq!(id.missing.len(), CATALOGUE.len() - 1);
    assert_eq!(id.missing["image_digest"], "not recorded");
    assert_eq!(id.flags.len(), 1);
    assert_eq!(id.flags[0].name, "image_tag_movable");
    // A digest reference is not movable.
    id.declare("image", json!("vllm/vllm-openai@sha256:ab"), "--declare")
        .unwrap();
    id.finish("not recorded");
    assert!(id.flags.is_empty());
}

#[test]
fn digest_pins_are_recognised() {
    let d = format!("sha256:{}", "0".repeat(64));
    let p = |v: Value| Pin {
        value: v,
        provenance: Provenance::Measured,
    };
    assert!(p(json!(d)).is_digest());
    assert!(p(json!({"name": "t", "sha256": d})).is_digest());
    assert!(!p(json!("v0.1")).is_digest());
}
