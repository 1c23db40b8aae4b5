//! `--public-dataset` text datasets besides ShareGPT (AIPerf's `public_dataset_loader`
//! entries whose rows are plain text), read from a local export of the dataset: JSON Lines
//! (what `datasets`' `to_json` writes) or one JSON list of row objects. Nothing is
//! downloaded. Each entry's column mapping is AIPerf's (`plugins.yaml`); the rows become
//! conversations as AIPerf's loaders make them:
//!
//! - flat instruction datasets (`aimo*`, `spec_al_*` but MT-Bench, `instruct_coder`,
//!   `blazedit_*`): one single-turn conversation per row, its prompt the row's prompt column
//!   or the entry's template filled from the row; rows whose prompt is empty are skipped;
//! - `spec_bench`: the first of the row's `turns`, stripped (AIPerf's default, single-turn);
//! - `spec_al_mtbench`: every non-empty string of the row's `prompt` list, one multi-turn
//!   conversation sent with history (the live replies are fed back between turns).
//!
//! Multimodal and ASR entries are refused by name: their rows carry images, video or audio,
//! which this client does not send.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;
use super::row::{kind, parse_jsonl, read_text};
use super::{Conv, NamedText, TurnSpec, session_id};

/// How one public dataset's rows become conversations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One single-turn prompt per row from `column`, or `template` filled from the row.
    Flat {
        column: &'static str,
        template: Option<&'static str>,
    },
    /// Spec-Bench's `turns` list: the first turn.
    SpecBench,
    /// MT-Bench's `prompt` list: all turns, with history.
    MtBench,
}

/// vLLM's Blazedit prompt, as AIPerf's `blazedit_*` entries spell it.
const BLAZEDIT: &str = "Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\n{code}\n```\n\nChange request:\n{change_request}\n\nPlease generate the new code file in the \"New file\" section below.";

const fn flat(column: &'static str) -> Shape {
    Shape::Flat {
        column,
        template: None,
    }
}

/// The text public datasets, with AIPerf's column mapping (name, Hugging Face dataset, shape).
pub(crate) const TEXT_DATASETS: &[(&str, &str, Shape)] = &[
    ("aimo", "AI-MO/NuminaMath-TIR", flat("problem")),
    ("aimo_aime", "AI-MO/aimo-validation-aime", flat("problem")),
    ("aimo_numina_cot", "AI-MO/NuminaMath-CoT", flat("problem")),
    ("aimo_numina_1_5", "AI-MO/NuminaMath-1.5", flat("problem")),
    (
        "spec_bench",
        "hemingkx/Spec-Bench question.jsonl",
        Shape::SpecBench,
    ),
    (
        "spec_al_gsm8k",
        "openai/gsm8k (main, test)",
        flat("question"),
    ),
    (
        "spec_al_math500",
        "HuggingFaceH4/MATH-500 (test)",
        flat("problem"),
    ),
    (
        "spec_al_humaneval",
        "openai/openai_humaneval (test)",
        flat("prompt"),
    ),
    (
        "spec_al_mbpp",
        "google-research-datasets/mbpp (full, test)",
        flat("text"),
    ),
    (
        "spec_al_mtbench",
        "HuggingFaceH4/mt_bench_prompts",
        Shape::MtBench,
    ),
    (
        "instruct_coder",
        "likaixin/InstructCoder",
        flat("instruction"),
    ),
    (
        "blazedit_5k",
        "vdaita/edit_5k_char",
        Shape::Flat {
            column: "change_request",
            template: Some(BLAZEDIT),
        },
    ),
    (
        "blazedit_10k",
        "vdaita/edit_10k_char",
        Shape::Flat {
            column: "change_request",
            template: Some(BLAZEDIT),
        },
    ),
];

/// AIPerf's public datasets refused here, and why.
pub(crate) const REFUSED: &[(&str, &str)] = &[
    ("mmstar", "its rows carry images"),
    ("mmvu", "its rows carry videos"),
    ("vision_arena", "its rows carry images"),
    ("llava_onevision", "its rows carry images"),
    ("librispeech", "an ASR dataset (audio input)"),
    ("voxpopuli", "an ASR dataset (audio input)"),
    ("gigaspeech", "an ASR dataset (audio input)"),
    ("ami", "an ASR dataset (audio input)"),
    ("spgispeech", "an ASR dataset (audio input)"),
    (
        "exgentic",
        "agentic replay of recorded tool snapshots, not built",
    ),
    (
        "exgentic_v2",
        "agentic replay of recorded tool snapshots, not built",
    ),
];

/// The shape of a text public dataset, or the reason it cannot be read.
pub(crate) fn lookup(name: &str) -> Result<Shape, String> {
    if let Some((_, _, s)) = TEXT_DATASETS.iter().find(|(n, _, _)| *n == name) {
        return Ok(*s);
    }
    let known: Vec<&str> = std::iter::once("sharegpt")
        .chain(TEXT_DATASETS.iter().map(|(n, _, _)| *n))
        .collect();
    let why = REFUSED
        .iter()
        .find(|(n, _)| *n == name || (name.starts_with("semianalysis") && *n == "exgentic"))
        .map(|(_, w)| *w);
    Err(
        match (why, name.starts_with("semianalysis_cc_traces_weka")) {
            (_, true) => format!(
                "{name:?} is not available: it is a Hugging Face Parquet export (not read); \
             replay a local WEKA trace file with --custom-dataset-type weka_trace instead \
             (text datasets: {})",
                known.join(", ")
            ),
            (Some(w), _) => format!(
                "{name:?} is not available: {w} (text datasets: {})",
                known.join(", ")
            ),
            (None, _) => format!(
                "{name:?} is not a public dataset (text datasets: {})",
                known.join(", ")
            ),
        },
    )
}

/// One row and where it is: a JSONL line, or an index into a JSON list.
struct At<'a> {
    file: &'a str,
    line: Option<usize>,
    index: Option<usize>,
}

impl At<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> DatasetError {
        let field = match self.index {
            Some(i) => format!("[{i}].{field}"),
            None => field.to_string(),
        };
        DatasetError::field(self.file, self.line, field, message)
    }
}

/// Rows with their place: (JSONL line, JSON list index, the row).
type PlacedRows = Vec<(Option<usize>, Option<usize>, Map<String, Value>)>;

/// The rows of a local export: JSON Lines, one JSON list of objects, or a Parquet or Arrow
/// IPC file.
fn read_rows(path: &Path) -> Result<PlacedRows, DatasetError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(DatasetError::file(
            &file,
            "a directory: give the dataset's rows as one JSON Lines or JSON file",
        ));
    }
    // A Parquet or Arrow export (the hub's Parquet, the Hugging Face cache's Arrow files):
    // its rows, placed by index.
    if super::columnar::format_of(path).is_some() || super::columnar::has_columnar_suffix(path) {
        let bytes = std::fs::read(path).map_err(|e| DatasetError::file(&file, e.to_string()))?;
        let rows = super::columnar::json_rows(&file, bytes)?;
        if rows.is_empty() {
            return Err(DatasetError::file(&file, "no rows"));
        }
        return Ok(rows
            .into_iter()
            .enumerate()
            .map(|(i, m)| (None, Some(i), m))
            .collect());
    }
    let text = read_text(path)?;
    if text.trim_start().starts_with('[') {
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            DatasetError::line(
                &file,
                e.line(),
                format!("not valid JSON (column {}): {e}", e.column()),
            )
        })?;
        let Value::Array(items) = doc else {
            // A document starting with '[' that parsed is a list; an error, never a panic.
            return Err(DatasetError::file(&file, "expected a list of rows"));
        };
        let mut rows = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            match item {
                Value::Object(m) => rows.push((None, Some(i), m)),
                other => {
                    return Err(DatasetError::field(
                        &file,
                        None,
                        format!("[{i}]"),
                        format!("expected an object, got {}", kind(&other)),
                    ));
                }
            }
        }
        if rows.is_empty() {
            return Err(DatasetError::file(&file, "no rows (the list is empty)"));
        }
        return Ok(rows);
    }
    Ok(parse_jsonl(&file, &text)?
        .into_iter()
        .map(|(l, m)| (Some(l), None, m))
        .collect())
}

/// Python's truth value of a cell: AIPerf skips a falsy prompt (`if not prompt`).
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// A cell as Python's `str()` shows it. Lists and objects are refused: in these datasets
/// they would be media or nested records, not text.
fn py_str(at: &At<'_>, field: &str, v: &Value) -> Result<String, DatasetError> {
    Ok(match v {
        Value::Null => "None".into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(at.err(
                field,
                format!(
                    "expected text, got {} (nested cells are not read)",
                    kind(other)
                ),
            ));
        }
    })
}

/// A truthy cell's text, `None` for a falsy one.
fn prompt_cell(
    at: &At<'_>,
    field: &str,
    v: Option<&Value>,
) -> Result<Option<String>, DatasetError> {
    match v {
        Some(v) if truthy(Some(v)) => py_str(at, field, v).map(Some),
        _ => Ok(None),
    }
}

/// Fills `{name}` placeholders from the row (Python's `str.format(**row)`; `{{`/`}}` are
/// literal braces). A placeholder naming no column is an error, as in AIPerf.
/// The error is the callback's (`Ok`) or the template's own fault (`Err`).
pub(crate) fn fill_template<E>(
    template: &str,
    mut cell: impl FnMut(&str) -> Result<String, E>,
) -> Result<String, Result<E, String>> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&c) {
            out.push(c as char);
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            return Err(Err("a single '}' in the template".into()));
        }
        let end = after
            .find('}')
            .ok_or_else(|| Err("an unclosed '{' in the template".to_string()))?;
        let name = &after[..end];
        out.push_str(&cell(name).map_err(Ok)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The conversations of `name`'s local export at `path`.
pub(crate) fn load(name: &str, shape: Shape, path: &Path) -> Result<Vec<Conv>, DatasetError> {
    let file = path.display().to_string();
    let rows = read_rows(path)?;
    let mut convs = Vec::new();
    for (n, (line, index, row)) in rows.iter().enumerate() {
        let at = At {
            file: &file,
            line: *line,
            index: *index,
        };
        let turns: Vec<String> = match shape {
            Shape::Flat { column, template } => {
                // AIPerf checks the column on the first row only; later rows lacking it
                // are empty prompts, skipped.
                if n == 0 && template.is_none() && !row.contains_key(column) {
                    let cols: Vec<&str> = row.keys().map(String::as_str).collect();
                    return Err(at.err(
                        column,
                        format!(
                            "missing: {name} reads its prompt from this column (columns: {})",
                            cols.join(", ")
                        ),
                    ));
                }
                let prompt = match template {
                    None => prompt_cell(&at, column, row.get(column))?,
                    Some(t) => {
                        let filled = fill_template(t, |key| match row.get(key) {
                            None => {
                                Err(at
                                    .err(key, format!("missing: {name}'s prompt template uses it")))
                            }
                            Some(v) => py_str(&at, key, v),
                        })
                        .map_err(|e| e.unwrap_or_else(|m| at.err(column, m)))?;
                        Some(filled)
                    }
                };
                prompt
                    .filter(|p| !p.trim().is_empty())
                    .into_iter()
                    .collect()
            }
            Shape::SpecBench => match row.get("turns") {
                Some(Value::Array(t)) if !t.is_empty() => {
                    let first = prompt_cell(&at, "turns[0]", Some(&t[0]))?;
                    first
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .into_iter()
                        .collect()
                }
                _ => Vec::new(),
            },
            Shape::MtBench => {
                if n == 0 && !row.contains_key("prompt") {
                    return Err(at.err("prompt", "missing: MT-Bench rows hold their turns in it"));
                }
                match row.get("prompt") {
                    Some(Value::Array(t)) => {
                        let mut out = Vec::with_capacity(t.len());
                        for (j, v) in t.iter().enumerate() {
                            if let Some(s) = prompt_cell(&at, &format!("prompt[{j}]"), Some(v))? {
                                let s = s.trim();
                                if !s.is_empty() {
                                    out.push(s.to_string());
                                }
                            }
                        }
                        out
                    }
                    _ => Vec::new(),
                }
            }
        };
        if turns.is_empty() {
            continue;
        }
        convs.push(Conv {
            id: session_id(convs.len()),
            history: shape == Shape::MtBench,
            turns: turns
                .into_iter()
                .map(|t| TurnSpec {
                    texts: vec![NamedText::plain(t)],
                    origin: line.map(|l| (file.clone(), l)),
                    ..Default::default()
                })
                .collect(),
        });
    }
    if convs.is_empty() {
        return Err(DatasetError::file(
            &file,
            format!("no row of {name} has a non-empty prompt"),
        ));
    }
    Ok(convs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `text` as the file `name` in a fresh directory, removed when the guard drops.
    fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("ib-public-")
            .tempdir()
            .unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    fn texts(c: &Conv) -> Vec<&str> {
        c.turns.iter().map(|t| t.texts[0].text.as_str()).collect()
    }

    fn load_named(name: &str, file: &str, text: &str) -> Result<Vec<Conv>, String> {
        let shape = lookup(name)?;
        let (_dir, p) = write(file, text);
        load(name, shape, &p).map_err(|e| e.to_string())
    }

    #[test]
    fn aimo_takes_the_problem_column_and_skips_empty_prompts() {
        let rows = concat!(
            "{\"problem\": \"What is 1+1?\", \"solution\": \"2\"}\n",
            "{\"problem\": \"\", \"solution\": \"x\"}\n",
            "\n",
            "{\"solution\": \"no problem column here\"}\n",
            "{\"problem\": \"   \"}\n",
            "{\"problem\": 7}\n",
        );
        let c = load_named("aimo", "aimo.jsonl", rows).unwrap();
        // Kept: line 1 and line 6 (the number 7 as Python's str() shows it).
        assert_eq!(c.len(), 2);
        assert_eq!(texts(&c[0]), ["What is 1+1?"]);
        assert_eq!(texts(&c[1]), ["7"]);
        assert!(!c[0].history);
        assert_eq!(c[1].turns[0].origin.as_ref().unwrap().1, 6);
    }

    #[test]
    fn the_first_row_must_have_the_prompt_column() {
        let e = load_named("instruct_coder", "ic.jsonl", "{\"input\": \"a\"}\n").unwrap_err();
        assert!(
            e.contains("ic.jsonl:1: field 'instruction': missing"),
            "{e}"
        );
        let e = load_named(
            "aimo",
            "bad.jsonl",
            "{\"problem\": \"a\"}\n{\"problem\": [1]}\n",
        )
        .unwrap_err();
        assert!(e.contains("bad.jsonl:2: field 'problem'"), "{e}");
        let e = load_named("aimo", "notjson.jsonl", "{\"problem\": \"a\"}\nnope\n").unwrap_err();
        assert!(e.contains("notjson.jsonl:2"), "{e}");
    }

    #[test]
    fn blazedit_fills_vllm_template_from_a_json_list() {
        let doc = r#"[{"code": "x = 1", "change_request": "rename x to y"}]"#;
        let c = load_named("blazedit_5k", "b.json", doc).unwrap();
        let want = "Given a code file, please apply the change requests and generate the new \
                    file.\n\nOriginal file:\n```python\nx = 1\n```\n\nChange request:\nrename x \
                    to y\n\nPlease generate the new code file in the \"New file\" section below.";
        assert_eq!(texts(&c[0]), [want]);
        let e = load_named("blazedit_10k", "b2.json", r#"[{"change_request": "r"}]"#).unwrap_err();
        assert!(e.contains("b2.json: field '[0].code': missing"), "{e}");
    }

    #[test]
    fn spec_bench_takes_the_first_turn_stripped() {
        let rows = concat!(
            "{\"question_id\": 1, \"turns\": [\"  first \", \"second\"]}\n",
            "{\"question_id\": 2, \"turns\": []}\n",
            "{\"question_id\": 3}\n",
            "{\"question_id\": 4, \"turns\": [\"only\"]}\n",
        );
        let c = load_named("spec_bench", "sb.jsonl", rows).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(texts(&c[0]), ["first"]);
        assert_eq!(texts(&c[1]), ["only"]);
    }

    #[test]
    fn mt_bench_rows_are_multi_turn_with_history() {
        let rows = concat!(
            "{\"prompt\": [\"Write a poem.\", \" \", \"Shorter.\"], \"category\": \"writing\"}\n",
            "{\"prompt\": \"not a list\"}\n",
        );
        let c = load_named("spec_al_mtbench", "mt.jsonl", rows).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(texts(&c[0]), ["Write a poem.", "Shorter."]);
        assert!(c[0].history);
        let e = load_named("spec_al_mtbench", "mt2.jsonl", "{\"turns\": [\"a\"]}\n").unwrap_err();
        assert!(e.contains("mt2.jsonl:1: field 'prompt'"), "{e}");
    }

    #[test]
    fn media_and_unknown_datasets_are_refused_by_name() {
        assert!(lookup("mmstar").unwrap_err().contains("images"));
        assert!(lookup("librispeech").unwrap_err().contains("audio"));
        assert!(
            lookup("semianalysis_cc_traces_weka_062126_256k")
                .unwrap_err()
                .contains("--custom-dataset-type weka_trace")
        );
        let e = lookup("nope").unwrap_err();
        assert!(
            e.contains("not a public dataset") && e.contains("aimo"),
            "{e}"
        );
        let e = load_named("aimo", "x.parquet", "PAR1").unwrap_err();
        assert!(e.contains("x.parquet: not a readable Parquet file"), "{e}");
        let e = load_named("aimo", "empty.jsonl", "{\"problem\": null}\n").unwrap_err();
        assert!(e.contains("no row of aimo"), "{e}");
    }

    #[test]
    fn template_braces() {
        let cell = |k: &str| -> Result<String, ()> { Ok(k.to_uppercase()) };
        assert_eq!(fill_template("a{x}b{{c}}{yz}", cell).unwrap(), "aXb{c}YZ");
        assert!(matches!(fill_template("a}b", cell), Err(Err(_))));
        assert!(matches!(fill_template("a{b", cell), Err(Err(_))));
    }

    proptest! {
        // Text without braces comes back unchanged; a never-panicking parser on any input.
        #[test]
        fn template_never_panics(t in "[a-z{}]{0,24}", plain in "[a-z ]{0,24}") {
            let cell = |k: &str| -> Result<String, ()> { Ok(k.len().to_string()) };
            let _ = fill_template(&t, cell);
            prop_assert_eq!(fill_template(&plain, cell).unwrap(), plain);
        }

        #[test]
        fn any_jsonl_gives_rows_or_a_located_error(lines in proptest::collection::vec(
            prop_oneof![
                Just("{\"problem\": \"p\"}".to_string()),
                Just("{\"problem\": 0}".to_string()),
                Just("{\"problem\": [\"x\"]}".to_string()),
                "[a-z{}\":]{0,12}",
            ], 1..6)) {
            let text = lines.join("\n");
            let (_dir, p) = write(&format!("prop-{}.jsonl", text.len()), &text);
            match load("aimo", lookup("aimo").unwrap(), &p) {
                Ok(c) => prop_assert!(c.iter().all(|c| texts(c) == ["p"])),
                Err(e) => prop_assert!(e.to_string().starts_with(&p.display().to_string())),
            }
        }
    }
}
