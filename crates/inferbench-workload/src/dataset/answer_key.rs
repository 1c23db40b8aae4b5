//! An answer key for the simulated server (`mock-server --answer-key FILE`): the questions
//! of a `single_turn` or `multi_turn` JSONL file with their expected answers.

use std::path::Path;

use inferbench_metrics::correctness::Answer;
use serde_json::Value;

use super::custom::read_texts;
use super::error::DatasetError;
use super::row::{Row, kind, parse_jsonl, read_text};

/// One question of a key: the prompt text as the server sees it in the last user message
/// (a row's texts joined by a newline) and its answer.
#[derive(Clone, Debug)]
pub struct KeyQuestion {
    pub question: String,
    pub answer: Answer,
    /// 1-based line of the row in the key file.
    pub line: usize,
}

/// Reads every row (each turn of a `turns` row) of `path`; every question must carry an
/// `answer`, or the key is refused naming the file, line and field.
pub fn read_answer_key(path: &Path) -> Result<Vec<KeyQuestion>, DatasetError> {
    let shown = path.display().to_string();
    let text = read_text(path)?;
    let rows = parse_jsonl(&shown, &text)?;
    let mut out = Vec::new();
    for (no, obj) in &rows {
        let r = Row::new(&shown, *no, obj);
        match r.get("turns") {
            Some(Value::Array(turns)) => {
                for (i, t) in turns.iter().enumerate() {
                    let Value::Object(tobj) = t else {
                        return Err(r.err(
                            &format!("turns[{i}]"),
                            format!("expected an object, got {}", kind(t)),
                        ));
                    };
                    out.push(question(&r.nested(format!("turns[{i}]."), tobj), *no)?);
                }
            }
            Some(v) => {
                return Err(r.err("turns", format!("expected a list, got {}", kind(v))));
            }
            None => out.push(question(&r, *no)?),
        }
    }
    Ok(out)
}

fn question(r: &Row<'_>, line: usize) -> Result<KeyQuestion, DatasetError> {
    let texts = read_texts(r)?;
    let Some(v) = r.get("answer") else {
        return Err(r.err(
            "answer",
            "missing: every question of an answer key needs one",
        ));
    };
    let answer = Answer::parse(v, "answer").map_err(|e| r.err(&e.field, e.message))?;
    let question = texts
        .iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Ok(KeyQuestion {
        question,
        answer,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Result<Vec<KeyQuestion>, DatasetError> {
        let dir = tempfile::Builder::new()
            .prefix("ib-key-")
            .tempdir()
            .unwrap();
        let p = dir.path().join(format!("k{}.jsonl", text.len()));
        std::fs::write(&p, text).unwrap();
        read_answer_key(&p)
    }

    #[test]
    fn a_key_reads_rows_and_turns_and_refuses_a_row_without_an_answer() {
        let k = key(concat!(
            "{\"text\": \"2+2?\", \"answer\": {\"number\": 4}}\n",
            "{\"session_id\": \"s\", \"turns\": [{\"texts\": [\"a\", \"b\"], \"answer\": \"x\"}]}\n"
        ))
        .unwrap();
        assert_eq!(k.len(), 2);
        assert_eq!(k[1].question, "a\nb");
        assert_eq!(k[1].line, 2);
        let e = key("{\"text\": \"q\", \"answer\": 1}\n{\"text\": \"r\"}\n").unwrap_err();
        assert!(
            e.to_string()
                .contains(":1: field 'answer': expected a string"),
            "{e}"
        );
        let e = key("{\"text\": \"r\"}\n").unwrap_err();
        assert!(
            e.to_string().ends_with(
                ":1: field 'answer': missing: every question of an answer key needs one"
            ),
            "{e}"
        );
    }
}
