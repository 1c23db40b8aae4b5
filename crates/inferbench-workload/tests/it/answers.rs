//! Expected answers in dataset rows (`answer`, docs/correctness.md): carried per payload, per
//! turn for multi_turn, and a bad one is a one-line error naming the file, line and field.

use crate::common;

use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_workload::Corpus;
use inferbench_workload::dataset::build_workload;

/// `text` as the file `name` in a fresh directory, removed when the guard drops; the path
/// as a string.
fn file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix("ib-answers-")
        .tempdir()
        .unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p.display().to_string())
}

fn plan(path: &str, kind: &str) -> RunPlan {
    let mut p = common::base_plan(EndpointType::Chat);
    p.dataset.input_file = Some(path.to_string());
    p.dataset.custom_dataset_type = Some(kind.to_string());
    p
}

#[test]
fn single_turn_rows_carry_their_answers_by_payload() {
    let (_dir, f) = file(
        "st.jsonl",
        concat!(
            "{\"text\": \"Capital of France?\", \"answer\": \"Paris\"}\n",
            "{\"text\": \"No answer here\"}\n",
            "{\"text\": \"2+3?\", \"answer\": {\"number\": 5, \"abs_tol\": 0}}\n",
        ),
    );
    let b = build_workload(
        &plan(&f, "single_turn"),
        common::builtin(),
        Corpus::shakespeare(),
    )
    .unwrap();
    assert_eq!(b.answers.len(), b.workload.payloads.len());
    assert_eq!(b.answers.len(), 3);
    assert_eq!(b.answers[0].as_ref().unwrap().kind(), "exact");
    assert!(b.answers[1].is_none());
    assert_eq!(
        b.answers[2].as_ref().unwrap().canonical().to_string(),
        r#"{"kind":"number","value":5.0,"abs_tol":0.0}"#
    );
    // The answer is not sent: the body holds the prompt only.
    assert!(!b.workload.payloads[0].body.contains("Paris"));
}

#[test]
fn multi_turn_answers_are_per_turn() {
    let (_dir, f) = file(
        "mt.jsonl",
        "{\"session_id\": \"s1\", \"turns\": [{\"text\": \"Pick: A or B?\", \"answer\": {\"choice\": \"B\"}}, {\"text\": \"And now?\"}, {\"text\": \"Say 7\", \"answer\": {\"regex\": \"^7$\", \"example\": \"7\"}}]}\n",
    );
    let b = build_workload(
        &plan(&f, "multi_turn"),
        common::builtin(),
        Corpus::shakespeare(),
    )
    .unwrap();
    let kinds: Vec<Option<&str>> = b
        .answers
        .iter()
        .map(|a| a.as_ref().map(|a| a.kind()))
        .collect();
    assert_eq!(kinds, vec![Some("choice"), None, Some("regex")]);
}

#[test]
fn a_bad_answer_names_file_line_and_field() {
    let (_dir, f) = file(
        "bad.jsonl",
        "{\"text\": \"ok\", \"answer\": \"x\"}\n{\"text\": \"q\", \"answer\": {\"regex\": \"([\"}}\n",
    );
    let e = build_workload(
        &plan(&f, "single_turn"),
        common::builtin(),
        Corpus::shakespeare(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with(&format!("{f}:2: field 'answer.regex': invalid pattern")),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    let (_dir, f) = file(
        "badmt.jsonl",
        "{\"turns\": [{\"text\": \"q\", \"answer\": {\"choice\": \"7\"}}]}\n",
    );
    let e = build_workload(
        &plan(&f, "multi_turn"),
        common::builtin(),
        Corpus::shakespeare(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        format!("{f}:1: field 'turns[0].answer.choice': expected one letter A-Z, got \"7\"")
    );
}
