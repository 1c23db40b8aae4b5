//! `--custom-dataset-type speed_bench_*`: NVIDIA's SPEED-Bench JSONL splits, read from a local
//! file. A row is `question_id` (32 characters), `category` and `messages` (role/content
//! pairs); it becomes a conversation named by its `question_id` whose turns are its messages,
//! in order, with their roles, sent with history (AIPerf's multi-turn default). A per-category
//! type keeps only the rows of its category; the placeholder content that the public release
//! ships instead of some prompts is refused, as AIPerf refuses it.

use std::path::Path;

use serde_json::Value;

use super::custom::Grouper;
use super::error::DatasetError;
use super::row::{Row, kind, parse_jsonl, read_text};
use super::{Conv, NamedText, TurnSpec};

/// The text that stands in for prompts fetched separately with specdec_bench.
const PLACEHOLDER: &str =
    "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH";

/// AIPerf's SPEED-Bench type names and the category each keeps (None: every row).
pub(crate) const TYPES: &[(&str, Option<&str>)] = &[
    ("speed_bench_qualitative", None),
    ("speed_bench_coding", Some("coding")),
    ("speed_bench_humanities", Some("humanities")),
    ("speed_bench_math", Some("math")),
    ("speed_bench_multilingual", Some("multilingual")),
    ("speed_bench_qa", Some("qa")),
    ("speed_bench_rag", Some("rag")),
    ("speed_bench_reasoning", Some("reasoning")),
    ("speed_bench_roleplay", Some("roleplay")),
    ("speed_bench_stem", Some("stem")),
    ("speed_bench_summarization", Some("summarization")),
    ("speed_bench_writing", Some("writing")),
    ("speed_bench_throughput_1k", None),
    ("speed_bench_throughput_2k", None),
    ("speed_bench_throughput_8k", None),
    ("speed_bench_throughput_16k", None),
    ("speed_bench_throughput_32k", None),
    ("speed_bench_throughput_1k_low_entropy", Some("low_entropy")),
    ("speed_bench_throughput_1k_mixed", Some("mixed")),
    (
        "speed_bench_throughput_1k_high_entropy",
        Some("high_entropy"),
    ),
];

/// The category filter of a SPEED-Bench type name; `None` if it is not one.
pub(crate) fn category_of(type_name: &str) -> Option<Option<&'static str>> {
    TYPES.iter().find(|(n, _)| *n == type_name).map(|(_, c)| *c)
}

fn nonblank<'a>(r: &Row<'a>, key: &str) -> Result<&'a str, DatasetError> {
    match r.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(r.err(key, "is empty")),
        Some(v) => Err(r.err(key, format!("expected a string, got {}", kind(v)))),
        None => Err(r.err(key, "missing")),
    }
}

pub(crate) fn load(path: &Path, type_name: &str) -> Result<Vec<Conv>, DatasetError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(DatasetError::file(
            &file,
            "is a directory: this dataset type reads one file",
        ));
    }
    let category = category_of(type_name).flatten();
    let rows = parse_jsonl(&file, &read_text(path)?)?;
    let mut g = Grouper::new(true);
    for (no, obj) in &rows {
        let r = Row::new(&file, *no, obj);
        let qid = nonblank(&r, "question_id")?;
        if qid.chars().count() != 32 {
            return Err(r.err(
                "question_id",
                format!("expected 32 characters, got {}", qid.chars().count()),
            ));
        }
        let cat = nonblank(&r, "category")?;
        let msgs = match r.get("messages") {
            Some(Value::Array(m)) if !m.is_empty() => m,
            Some(Value::Array(_)) => {
                return Err(r.err("messages", "at least one message is needed"));
            }
            Some(v) => return Err(r.err("messages", format!("expected a list, got {}", kind(v)))),
            None => return Err(r.err("messages", "missing")),
        };
        // Every row is checked, as AIPerf validates each before filtering by category.
        let mut turns = Vec::with_capacity(msgs.len());
        for (i, m) in msgs.iter().enumerate() {
            let Value::Object(mo) = m else {
                return Err(r.err(
                    &format!("messages[{i}]"),
                    format!("expected an object, got {}", kind(m)),
                ));
            };
            let mr = r.nested(format!("messages[{i}]."), mo);
            let role = nonblank(&mr, "role")?;
            let content = nonblank(&mr, "content")?;
            if content == PLACEHOLDER {
                return Err(mr.err(
                    "content",
                    "is SPEED-Bench's placeholder: fetch the full prompts with specdec_bench first",
                ));
            }
            turns.push(TurnSpec {
                texts: vec![NamedText::plain(content)],
                role: Some(role.to_string()),
                origin: Some((file.clone(), *no)),
                ..Default::default()
            });
        }
        if category.is_some_and(|c| c != cat) {
            continue;
        }
        g.push(Some(qid.to_string()), turns);
    }
    if g.convs.is_empty() {
        return Err(DatasetError::file(
            &file,
            format!(
                "no row of category {:?} ({type_name})",
                category.unwrap_or("")
            ),
        ));
    }
    Ok(g.convs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Q1: &str = "0123456789abcdef0123456789abcdef";
    const Q2: &str = "fedcba9876543210fedcba9876543210";

    /// `text` as the file `name` in a fresh directory, removed when the guard drops.
    fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("ib-speed-")
            .tempdir()
            .unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    fn row(q: &str, cat: &str, msgs: &str) -> String {
        format!("{{\"question_id\": \"{q}\", \"category\": \"{cat}\", \"messages\": {msgs}}}\n")
    }

    #[test]
    fn rows_become_conversations_of_their_messages_filtered_by_category() {
        let text = row(
            Q1,
            "coding",
            r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Sort a list."}]"#,
        ) + &row(Q2, "math", r#"[{"role": "user", "content": "2+2?"}]"#);
        let (_dir, p) = write("qualitative.jsonl", &text);
        let all = load(&p, "speed_bench_qualitative").unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].id, Q1);
        assert!(all[0].history);
        let roles: Vec<_> = all[0]
            .turns
            .iter()
            .map(|t| t.role.as_deref().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user"]);
        assert_eq!(all[0].turns[1].texts[0].text, "Sort a list.");
        let math = load(&p, "speed_bench_math").unwrap();
        assert_eq!(math.len(), 1);
        assert_eq!(math[0].id, Q2);
        let e = load(&p, "speed_bench_rag").unwrap_err().to_string();
        assert!(e.contains("no row of category \"rag\""), "{e}");
    }

    #[test]
    fn bad_rows_name_file_line_and_field() {
        let ok = row(Q1, "qa", r#"[{"role": "user", "content": "hi"}]"#);
        let cases = [
            (
                row("short", "qa", r#"[{"role": "user", "content": "hi"}]"#),
                "question_id",
            ),
            (
                row(Q1, "", r#"[{"role": "user", "content": "hi"}]"#),
                "category",
            ),
            (row(Q1, "qa", "[]"), "messages"),
            (
                row(Q1, "qa", r#"[{"role": " ", "content": "hi"}]"#),
                "messages[0].role",
            ),
            (
                row(
                    Q1,
                    "qa",
                    &format!(r#"[{{"role": "user", "content": "{PLACEHOLDER}"}}]"#),
                ),
                "messages[0].content",
            ),
        ];
        for (bad, field) in cases {
            let (_dir, p) = write("bad.jsonl", &(ok.clone() + &bad));
            let e = load(&p, "speed_bench_qualitative").unwrap_err().to_string();
            assert!(e.contains(&format!("bad.jsonl:2: field '{field}'")), "{e}");
        }
        assert_eq!(
            category_of("speed_bench_throughput_1k_mixed"),
            Some(Some("mixed"))
        );
        assert_eq!(category_of("speed_bench_throughput_8k"), Some(None));
        assert_eq!(category_of("speed_bench"), None);
    }

    proptest! {
        #[test]
        fn arbitrary_lines_give_conversations_or_a_located_error(
            lines in proptest::collection::vec("[a-z{}\\[\\]\":, ]{0,30}", 1..5)
        ) {
            let text = lines.join("\n");
            let (_dir, p) = write(&format!("prop-{}.jsonl", text.len()), &text);
            if let Err(e) = load(&p, "speed_bench_qualitative") {
                prop_assert!(e.to_string().starts_with(&p.display().to_string()));
            }
        }
    }
}
