//! The client-headroom rule reading a qualification: parsing `qualification = "…"` relative
//! to the spec, and each verdict against the candidate runs' worker counts.

use super::observe::RunObs;
use super::rules::delivery;
use super::spec::*;
use super::tests::{obs, run, spec, with_ctx};
use super::verdict::Outcome;
use crate::qualify::{Qualification, QualifySpec, StepRun, Verdict, to_json};

fn qualification(verdict: Verdict, workers: Option<usize>, tau: f64) -> Qualification {
    Qualification {
        verdict,
        qualified_workers: workers,
        reasons: vec![format!("reason of {}", verdict.as_str())],
        spec: QualifySpec {
            tolerance_pct: tau,
            ..QualifySpec::default()
        },
        runs: [2, 4, 8]
            .iter()
            .map(|&w| StepRun {
                workers: w,
                ..Default::default()
            })
            .collect(),
        detail: serde_json::Value::Null,
    }
}

fn qref(q: Qualification) -> QualificationRef {
    QualificationRef {
        path: "qualification.json".into(),
        digest: "sha256:test".into(),
        decided: Box::new(q),
    }
}

fn candidate(workers_max: Option<usize>) -> RunObs {
    let mut r = run(Vec::new(), 1.0);
    r.id = format!("sha256:w{workers_max:?}");
    r.workers_max = workers_max;
    r
}

fn rule(q: Option<QualificationRef>, levels: Option<u32>, tol: Option<f64>) -> ClientHeadroomRule {
    ClientHeadroomRule {
        worker_levels_min: levels,
        plateau_tolerance: tol,
        client_cpu_pressure_some_avg10_max: None,
        client_cpu_utilization_max: None,
        backlog_growth: Throttle::Allow,
        qualification: q,
    }
}

/// The rule's outcome and its `client_saturation` check's outcome.
fn judge(c: &ClientHeadroomRule, runs: Vec<RunObs>) -> (Outcome, Outcome, String) {
    let r = Rule {
        id: "client.headroom".into(),
        line: 1,
        body: RuleBody::ClientHeadroom(c.clone()),
    };
    let v = with_ctx(&spec(Vec::new()), &obs(&[], runs), |ctx| {
        delivery::client_headroom(ctx, &r, c)
    });
    let s = v
        .checks
        .iter()
        .find(|k| k.name == "client_saturation")
        .expect("the check");
    (v.verdict, s.verdict, s.reason.clone())
}

#[test]
fn sufficient_passes_with_at_least_the_qualified_workers() {
    let q = || Some(qref(qualification(Verdict::ClientSufficient, Some(4), 1.0)));
    let (v, s, why) = judge(
        &rule(q(), None, None),
        vec![candidate(Some(4)), candidate(Some(8))],
    );
    assert_eq!((v, s), (Outcome::Pass, Outcome::Pass), "{why}");
    // Fewer workers than the qualified count: the ladder showed the client mattered there.
    let (_, s, why) = judge(&rule(q(), None, None), vec![candidate(Some(2))]);
    assert_eq!(s, Outcome::Fail, "{why}");
    assert!(why.contains("fewer than the 4"), "{why}");
    // No --workers-max: one worker.
    let (_, s, _) = judge(&rule(q(), None, None), vec![candidate(None)]);
    assert_eq!(s, Outcome::Fail);
    // Beyond the largest count the ladder ran: untested.
    let (_, s, why) = judge(&rule(q(), None, None), vec![candidate(Some(16))]);
    assert_eq!(s, Outcome::Inconclusive, "{why}");
    // SERVER_SATURATED qualifies the same way.
    let sat = Some(qref(qualification(Verdict::ServerSaturated, Some(2), 1.0)));
    let (_, s, _) = judge(&rule(sat, None, None), vec![candidate(Some(2))]);
    assert_eq!(s, Outcome::Pass);
}

#[test]
fn limited_fails_and_inconclusive_stays_inconclusive() {
    let lim = Some(qref(qualification(Verdict::ClientLimited, None, 1.0)));
    let (v, s, why) = judge(&rule(lim, None, None), vec![candidate(Some(8))]);
    assert_eq!((v, s), (Outcome::Fail, Outcome::Fail));
    assert!(
        why.contains("CLIENT_LIMITED: reason of CLIENT_LIMITED"),
        "{why}"
    );
    let inc = Some(qref(qualification(Verdict::Inconclusive, None, 1.0)));
    let (v, s, why) = judge(&rule(inc, None, None), vec![candidate(Some(8))]);
    assert_eq!((v, s), (Outcome::Inconclusive, Outcome::Inconclusive));
    assert!(why.contains("reason of INCONCLUSIVE"), "{why}");
}

#[test]
fn levels_and_tolerance_are_checked_against_the_qualification() {
    let q = |tau| Some(qref(qualification(Verdict::ClientSufficient, Some(4), tau)));
    // Three worker counts (2, 4, 8), τ = 1 % declared.
    let (v, _, _) = judge(&rule(q(1.0), Some(3), Some(0.01)), vec![candidate(Some(4))]);
    assert_eq!(v, Outcome::Pass);
    let (v, _, _) = judge(&rule(q(1.0), Some(4), None), vec![candidate(Some(4))]);
    assert_eq!(v, Outcome::Fail);
    let (v, _, _) = judge(&rule(q(2.0), None, Some(0.01)), vec![candidate(Some(4))]);
    assert_eq!(v, Outcome::Fail);
}

#[test]
fn the_spec_names_the_file_relative_to_itself() {
    let tmp = tempfile::Builder::new()
        .prefix("ib-headroom-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("qual")).unwrap();
    let q = qualification(Verdict::ClientSufficient, Some(4), 1.0);
    let text = serde_json::to_string(&to_json(&q)).unwrap();
    std::fs::write(dir.join("qual/qualification.json"), &text).unwrap();
    let spec = "[gate]\nname = \"t\"\n\n[[rule]]\nid = \"client.headroom\"\nfamily = \"client_headroom\"\nqualification = \"QUAL\"\n";
    let path = dir.join("gate.toml");
    std::fs::write(&path, spec.replace("QUAL", "qual/qualification.json")).unwrap();
    let s = super::parse_file(&path).unwrap();
    let RuleBody::ClientHeadroom(c) = &s.rules[0].body else {
        panic!("a headroom rule")
    };
    let r = c.qualification.as_ref().unwrap();
    assert_eq!(r.path, "qual/qualification.json");
    assert_eq!(*r.decided, q);
    assert_eq!(
        r.digest,
        inferbench_core::canonical::sha256_id(text.as_bytes())
    );
    // A missing file: one line naming the spec, its line 7 and the field.
    std::fs::write(&path, spec.replace("QUAL", "nope.json")).unwrap();
    let e = super::parse_file(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:7: ", path.display())), "{e}");
    assert!(
        e.contains("qualification") && e.contains("no such file"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    // Not a qualification document.
    std::fs::write(dir.join("bad.json"), "{\"schema\": \"other\"}").unwrap();
    std::fs::write(&path, spec.replace("QUAL", "bad.json")).unwrap();
    let e = super::parse_file(&path).unwrap_err().to_string();
    assert!(e.contains(":7: ") && e.contains("schema \"other\""), "{e}");
}
