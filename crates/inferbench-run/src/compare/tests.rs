//! The engine on hand-made runs (the reference's worked numbers), and the epoch check.

use std::collections::BTreeMap;

use inferbench_core::Summary;
use inferbench_core::identity::{Identity, Provenance};
use inferbench_core::summary::{MetricResult, MetricValue};
use serde_json::json;

use super::engine::{Settings, evaluate};
use super::load::RunData;
use super::margins::{parse_margin, resolve};
use super::report::{Method, Verdict};
use super::{check_epoch, verdict};

fn run(id: &str, throughput: f64, attempted: u64, good: Option<u64>) -> RunData {
    RunData {
        path: format!("/runs/{id}").into(),
        id: id.into(),
        native_set: "aiperf-0.13".into(),
        identity: None,
        summary: Summary {
            definitions: "aiperf-0.13".into(),
            metrics: vec![MetricResult {
                tag: "output_token_throughput".into(),
                header: "Output Token Throughput".into(),
                unit: "tokens/sec".into(),
                value: MetricValue::Scalar { value: throughput },
            }],
            error_summary: vec![],
        },
        values: BTreeMap::new(),
        attempted,
        errors: 0,
        good,
    }
}

const SETTINGS: Settings = Settings {
    alpha: 0.05,
    resamples: 200,
};

#[test]
fn welch_tost_on_the_worked_example_is_equivalent_at_3_percent() {
    let base: Vec<RunData> = [8410.0, 8395.0, 8452.0, 8388.0, 8431.0]
        .iter()
        .map(|&v| run("b", v, 1000, None))
        .collect();
    let cand: Vec<RunData> = [8352.0, 8401.0, 8377.0, 8329.0, 8390.0]
        .iter()
        .map(|&v| run("c", v, 1000, None))
        .collect();
    let e = parse_margin("output_token_throughput=±3%", "--margin").unwrap();
    let r = resolve(&[e], &base[0].summary, "aiperf-0.13", false).unwrap();
    let m = evaluate(&r[0], &base, &cand, &SETTINGS, 1);
    assert_eq!(m.method, Method::WelchTost);
    assert_eq!(m.verdict, Verdict::Equivalent, "{}", m.reason);
    let ratio = m.difference.as_ref().unwrap().ratio.unwrap();
    assert!((ratio[1] - 0.9907).abs() < 5e-5 && (ratio[2] - 0.9985).abs() < 5e-5);
    assert!((m.baseline.value.unwrap() - 8415.2).abs() < 1e-9);
    // At ±0.5 % the same data cannot decide; more runs would (the interval is off 0).
    let e = parse_margin("output_token_throughput=±0.5%", "--margin").unwrap();
    let r = resolve(&[e], &base[0].summary, "aiperf-0.13", false).unwrap();
    let m = evaluate(&r[0], &base, &cand, &SETTINGS, 1);
    assert_eq!(m.verdict, Verdict::Inconclusive);
    let n = m.needed.unwrap();
    assert_eq!(n.unit, "runs_per_side");
    assert!(n.value > 5, "{}", n.value);
}

#[test]
fn goodput_905_vs_920_is_inconclusive_at_2pp_and_says_17300_per_arm() {
    let base = vec![run("b", 1.0, 1000, Some(920))];
    let cand = vec![run("c", 1.0, 1000, Some(905))];
    let e = parse_margin("good_request_fraction=±2pp", "--margin").unwrap();
    let r = resolve(&[e], &base[0].summary, "aiperf-0.13", true).unwrap();
    let m = evaluate(&r[0], &base, &cand, &SETTINGS, 1);
    assert_eq!(m.method, Method::Newcombe);
    let d = m.difference.as_ref().unwrap();
    // The reference's 90 % Newcombe interval [−3.59, +0.58] pp straddles −2 pp.
    assert!((d.low + 0.0359).abs() < 5e-5 && (d.high - 0.0058).abs() < 5e-5);
    assert_eq!(m.verdict, Verdict::Inconclusive);
    let n = m.needed.unwrap();
    assert_eq!(n.unit, "requests_per_arm");
    assert!((17_000..=17_600).contains(&n.value), "{}", n.value);
    // A run-level metric with one run a side has no interval and asks for 3 runs.
    let e = parse_margin("output_token_throughput=±3%", "--margin").unwrap();
    let r = resolve(&[e], &base[0].summary, "aiperf-0.13", false).unwrap();
    let m = evaluate(&r[0], &base, &cand, &SETTINGS, 1);
    assert_eq!((m.method, m.verdict), (Method::None, Verdict::Inconclusive));
    assert_eq!(m.needed.as_ref().unwrap().value, 3);
    let mut one = vec![m];
    assert_eq!(verdict::apply_holm(&mut one, 0.05).family_size, 0);
}

fn with_identity(id: &str, workload: &str, set: &str) -> RunData {
    let mut r = run(id, 1.0, 10, None);
    let mut i = Identity::default();
    i.set("workload_digest", json!(workload), Provenance::Measured);
    i.set("definition_set", json!(set), Provenance::Measured);
    r.identity = Some(i);
    r
}

#[test]
fn the_epoch_check_refuses_different_contract_pins_unless_allowed() {
    let a = [with_identity("a", "sha256:aa", "aiperf-0.13")];
    let same = [with_identity("b", "sha256:aa", "aiperf-0.13")];
    let other = [with_identity("c", "sha256:bb", "aiperf-0.13")];
    let e = check_epoch(&a, &same, false, false).unwrap();
    assert_eq!((e.checked, e.matched), (true, Some(true)));
    assert!(e.changed.is_empty());

    let f = check_epoch(&a, &other, false, false).unwrap_err();
    assert_eq!(f.code, 2);
    assert!(f.message.contains("different epochs") && f.message.contains("workload_digest"));
    assert!(f.message.contains("--allow-epoch-change"), "{}", f.message);

    let e = check_epoch(&a, &other, false, true).unwrap();
    assert_eq!(e.matched, Some(false));
    assert_eq!(e.changed.len(), 1);
    assert_eq!(e.changed[0].name, "workload_digest");
    assert_eq!(e.changed[0].before, Some(json!("sha256:aa")));
    assert_eq!(e.changed[0].after, Some(json!("sha256:bb")));

    // Re-scored under one set (--definitions), a different native set is no epoch change.
    let gp = [with_identity("d", "sha256:aa", "genai-perf-0.0.13")];
    assert!(check_epoch(&a, &gp, false, false).is_err());
    assert_eq!(
        check_epoch(&a, &gp, true, false).unwrap().matched,
        Some(true)
    );

    // A run without an identity: not checked, and said.
    let none = [run("e", 1.0, 10, None)];
    let e = check_epoch(&a, &none, false, false).unwrap();
    assert!(!e.checked && e.note.contains("1 of 2 runs record no identity"));
}
