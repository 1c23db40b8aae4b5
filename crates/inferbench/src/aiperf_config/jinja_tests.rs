//! AIPerf's Jinja substitution, with expected values worked out by hand.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{coerce, render_doc};

fn doc(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn variables_compute_numbers_that_stay_numbers() {
    let d = doc(json!({
        "variables": {"base": 16, "mult": 10},
        "benchmark": {
            "dataset": {"entries": "{{ base * mult }}", "half": "{{ base // 3 }}"},
            "phases": [{"name": "profiling", "rate": "{{ base / 4 }}"}],
        },
    }));
    let r = render_doc("f.yaml", &d).unwrap();
    let b = &r["benchmark"];
    // 16 * 10 = 160, an integer; 16 // 3 = 5 (floor); 16 / 4 = 4.0, a float.
    assert_eq!(b["dataset"]["entries"], json!(160));
    assert_eq!(b["dataset"]["half"], json!(5));
    assert_eq!(b["phases"][0]["rate"], json!(4.0));
}

#[test]
fn variables_resolve_in_dependency_order_whatever_the_file_order() {
    let d = doc(json!({
        "variables": {"total": "{{ per_gpu * gpus }}", "gpus": 4, "per_gpu": 32},
        "benchmark": {"phases": {"concurrency": "{{ total }}"}},
    }));
    let r = render_doc("f.yaml", &d).unwrap();
    assert_eq!(r["benchmark"]["phases"]["concurrency"], json!(128));
    // The variables block itself is rendered too.
    assert_eq!(r["variables"]["total"], json!(128));
}

#[test]
fn body_fields_are_reachable_at_the_top_and_named_lists_by_name() {
    let d = doc(json!({
        "benchmark": {
            "model": "m1",
            "phases": [
                {"name": "warmup", "concurrency": 2},
                {"name": "profiling", "concurrency": 8, "requests": "{{ phases.profiling.concurrency * 3 }}"},
            ],
            "artifacts": {"prefix": "{{ model }}-run"},
        },
    }));
    let r = render_doc("f.yaml", &d).unwrap();
    assert_eq!(r["benchmark"]["phases"][1]["requests"], json!(24));
    assert_eq!(r["benchmark"]["artifacts"]["prefix"], json!("m1-run"));
}

#[test]
fn user_files_and_request_templates_are_left_for_later() {
    let d = doc(json!({
        "benchmark": {
            "endpoint": {"template": {"body": "{{ text }}"}},
            "artifacts": {"userFiles": [{"path": "a", "content": "{{ epoch }}"}]},
        },
    }));
    let r = render_doc("f.yaml", &d).unwrap();
    assert_eq!(
        r["benchmark"]["endpoint"]["template"]["body"],
        json!("{{ text }}")
    );
    assert_eq!(
        r["benchmark"]["artifacts"]["userFiles"][0]["content"],
        json!("{{ epoch }}")
    );
}

#[test]
fn errors_name_the_file_and_the_field() {
    let d = doc(json!({"benchmark": {"dataset": {"entries": "{{ nope * 2 }}"}}}));
    let e = render_doc("f.yaml", &d).unwrap_err();
    assert!(
        e.starts_with("f.yaml: benchmark.dataset.entries: \"{{ nope * 2 }}\": Jinja: "),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    let d = doc(json!({"benchmark": {"phases": [{"rate": "{{ 3"}]}}));
    let e = render_doc("f.yaml", &d).unwrap_err();
    assert!(
        e.starts_with("f.yaml: benchmark.phases[0].rate: \"{{ 3\": Jinja: "),
        "{e}"
    );
    let d = doc(json!({"variables": {"a": "{{ b }}", "b": "{{ a }}"}, "benchmark": {}}));
    let e = render_doc("f.yaml", &d).unwrap_err();
    assert_eq!(e, "f.yaml: variables: a circular reference among a, b");
}

#[test]
fn statements_render_too() {
    let d = doc(json!({
        "variables": {"big": true},
        "benchmark": {"phases": {"concurrency": "{% if big %}64{% else %}8{% endif %}"}},
    }));
    let r = render_doc("f.yaml", &d).unwrap();
    assert_eq!(r["benchmark"]["phases"]["concurrency"], json!(64));
}

#[test]
fn coercion_follows_python() {
    assert_eq!(coerce("TRUE"), json!(true));
    assert_eq!(coerce("False"), json!(false));
    assert_eq!(coerce(" 12 "), json!(12));
    assert_eq!(coerce("1_000"), json!(1000));
    assert_eq!(coerce("-7"), json!(-7));
    assert_eq!(coerce("2.5"), json!(2.5));
    assert_eq!(coerce("1e3"), json!(1000.0));
    assert_eq!(coerce(".5"), json!(0.5));
    assert_eq!(coerce("5."), json!(5.0));
    // Not numbers: kept as text (inf and nan have no JSON number either).
    for s in [
        "1__0", "_1", "1_", "abc", "", "1.2.3", "inf", "nan", "--1", "0x10",
    ] {
        assert_eq!(coerce(s), json!(s), "{s}");
    }
}

proptest! {
    #[test]
    fn any_integer_round_trips(i in any::<i64>()) {
        prop_assert_eq!(coerce(&i.to_string()), json!(i));
    }

    #[test]
    fn any_finite_float_round_trips(x in -1e300f64..1e300) {
        // Rust's shortest form of a float parses back to the same float; an integral one
        // prints without a point and so becomes an integer, as Python's int() would take it.
        let text = format!("{x:?}");
        let v = coerce(&text);
        prop_assert_eq!(v.as_f64(), Some(x));
    }

    #[test]
    fn any_text_renders_without_panic(s in "\\PC{0,40}") {
        let d = doc(json!({"benchmark": {"x": s}}));
        let _ = render_doc("f.yaml", &d);
    }
}
