use inferbench_core::record::{ErrorKind, Event, RecordError};
use inferbench_core::workload::{Payload, Workload};
use serde_json::json;

use super::*;

fn workload(n: usize) -> Workload {
    Workload {
        payloads: (0..n)
            .map(|i| Payload {
                conversation_id: format!("s{i}"),
                body: "{}".into(),
                ..Default::default()
            })
            .collect(),
    }
}

fn answer(v: serde_json::Value) -> Option<Answer> {
    Some(Answer::parse(&v, "answer").unwrap())
}

fn record(id: u64, payload: u64, content: &[&str], error: bool) -> Record {
    Record {
        id,
        payload_index: payload,
        events: content
            .iter()
            .map(|c| Event {
                content: Some(c.to_string()),
                // Reasoning is never part of the scored text.
                reasoning: Some("the answer is 99".into()),
                ..Default::default()
            })
            .collect(),
        error: error.then(|| RecordError {
            kind: ErrorKind::Http,
            code: Some(500),
            error_type: "HTTPError".into(),
            message: "x".into(),
        }),
        ..Default::default()
    }
}

/// A fresh directory and its path; the directory is removed when the guard drops.
fn tmp(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::Builder::new()
        .prefix(&format!("ib-corr-{name}-"))
        .tempdir()
        .unwrap();
    let p = d.path().to_path_buf();
    (d, p)
}

#[test]
fn counts_correct_wrong_errors_and_unanswered() {
    let w = workload(3);
    let set = AnswerSet::from_workload(
        &w,
        &[answer(json!({"number": 42})), None, answer(json!("Paris"))],
    )
    .unwrap();
    assert_eq!(set.len(), 2);
    let mut s = Scorer::new(set);
    s.push(&record(0, 0, &["4", "2"], false)).unwrap(); // "42": right
    s.push(&record(1, 1, &["whatever"], false)).unwrap(); // no answer
    s.push(&record(2, 2, &["Lyon"], false)).unwrap(); // wrong
    s.push(&record(3, 2, &[], true)).unwrap(); // failed: not scored
    s.push(&record(4, 2, &[""], false)).unwrap(); // empty: wrong and degenerate
    let t = &s.tally;
    assert_eq!(
        (t.scored, t.correct, t.degenerate, t.errors, t.unanswered),
        (3, 1, 1, 1, 1)
    );
    let sum = s.summary(0.95);
    assert_eq!(sum["by_kind"]["exact"], json!({"scored": 2, "correct": 0}));
    assert_eq!(sum["by_kind"]["number"], json!({"scored": 1, "correct": 1}));
    assert_eq!(sum["accuracy"], json!(1.0 / 3.0));
}

#[test]
fn a_run_without_answers_has_no_set_and_a_frozen_set_reads_back() {
    assert!(AnswerSet::from_workload(&workload(2), &[None, None]).is_none());
    let (_tmp, dir) = tmp("read");
    assert!(AnswerSet::read(&dir).unwrap().is_none());
    let set =
        AnswerSet::from_workload(&workload(2), &[None, answer(json!({"choice": "c"}))]).unwrap();
    freeze(&dir, Some(&set)).unwrap();
    let back = AnswerSet::read(&dir).unwrap().unwrap();
    assert_eq!(back.digest(), set.digest());
    assert_eq!(back.get(1), set.get(1));
    assert!(back.get(0).is_none());
    let text = std::fs::read_to_string(dir.join(EXPECTED_ANSWERS)).unwrap();
    assert_eq!(
        text,
        "{\"payload_index\":1,\"conversation_id\":\"s1\",\"turn_index\":0,\"answer\":{\"kind\":\"choice\",\"letter\":\"C\"}}\n"
    );
    assert_eq!(
        set.digest(),
        format!(
            "sha256:{}",
            inferbench_core::seed::sha256_hex(text.as_bytes())
        )
    );
}

#[test]
fn a_bad_frozen_line_names_file_line_and_field() {
    let (_tmp, dir) = tmp("bad");
    std::fs::write(
        dir.join(EXPECTED_ANSWERS),
        "{\"payload_index\":0,\"answer\":{\"kind\":\"exact\",\"text\":\"a\"}}\n{\"payload_index\":1,\"answer\":{\"kind\":\"regex\",\"pattern\":\"(\"}}\n",
    )
    .unwrap();
    let e = AnswerSet::read(&dir).unwrap_err();
    assert_eq!(e.code, crate::exit::INPUT);
    let shown = dir.join(EXPECTED_ANSWERS).display().to_string();
    assert!(
        e.message
            .starts_with(&format!("{shown}:2: field 'answer.regex': invalid pattern")),
        "{}",
        e.message
    );
}
