//! Bad dataset input: every error names the file, the line and the field; arbitrary lines
//! never panic.

use crate::common;

use std::path::PathBuf;

use inferbench_core::dataset_plan::DatasetPlan;
use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_workload::dataset::build_workload;
use inferbench_workload::{Corpus, Tokenizer, WorkloadError};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn tok() -> &'static Tokenizer {
    common::builtin()
}

fn plan(file: &str, kind: &str) -> RunPlan {
    let mut p = common::base_plan(EndpointType::Chat);
    p.dataset = DatasetPlan {
        input_file: Some(file.into()),
        custom_dataset_type: Some(kind.into()),
        isl_block_size: Some(4),
        num_conversations: Some(3),
        ..Default::default()
    };
    p
}

/// A file holding `text` in a fresh directory, removed (with the directory) on drop.
struct TempFile {
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let dir = tempfile::Builder::new()
            .prefix("ib-dserr-")
            .tempdir()
            .unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        TempFile { file: p, _dir: dir }
    }
    fn path(&self) -> String {
        self.file.display().to_string()
    }
}

fn run(kind: &str, name: &str, text: &str) -> Result<usize, String> {
    let f = TempFile::new(name, text);
    build_workload(&plan(&f.path(), kind), tok(), Corpus::shakespeare())
        .map(|w| w.workload.payloads.len())
        .map_err(|e| {
            // Errors of the file name it; strip the temp directory for the comparisons.
            let s = e.to_string();
            let dir = f.file.parent().unwrap().display().to_string();
            s.replace(&format!("{dir}/"), "")
        })
}

const GOOD: &str = "{\"input_length\": 5}\n";

#[test]
fn mooncake_errors_name_file_line_and_field() {
    let cases: &[(&str, &str)] = &[
        (
            "{\"input_length\": 5, \"hash_ids\": \"abc\"}",
            "trace.jsonl:3: field 'hash_ids': expected a list of integers",
        ),
        (
            "{\"input_length\": 5, \"hash_ids\": [1, 2.5]}",
            "trace.jsonl:3: field 'hash_ids': expected a list of integers",
        ),
        (
            "{\"input_length\": 5, \"text_input\": \"x\"}",
            "trace.jsonl:3: field 'text_input': input_length, text_input, messages and payload are mutually exclusive",
        ),
        (
            "{\"output_length\": 5}",
            "trace.jsonl:3: field 'input_length': exactly one of input_length, text_input, messages or payload is needed",
        ),
        (
            "{\"text_input\": \"x\", \"hash_ids\": [1]}",
            "trace.jsonl:3: field 'hash_ids': only allowed with input_length",
        ),
        (
            "{\"input_length\": -3}",
            "trace.jsonl:3: field 'input_length': expected an integer >= 0, got -3",
        ),
        (
            "{\"input_length\": 5, \"timestamp\": \"soon\"}",
            "trace.jsonl:3: field 'timestamp': expected a number of ms >= 0, got \"soon\"",
        ),
        (
            "{\"input_length\": 5, \"image\": \"cat.png\"}",
            "trace.jsonl:3: field 'image': images, audio and video are read by single_turn, multi_turn and random_pool rows, not by mooncake_trace",
        ),
        (
            "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"x\"}}]}]}",
            "trace.jsonl:3: field 'messages[0].content[0]': image, audio and video parts in a trace's messages are not built (single_turn and multi_turn rows take media)",
        ),
        (
            "{\"messages\": [{\"content\": \"hi\"}]}",
            "trace.jsonl:3: field 'messages[0]': a message needs a role",
        ),
        (
            "{\"text_input\": \"x\", \"tools\": []}",
            "trace.jsonl:3: field 'tools': only allowed with messages",
        ),
        (
            "{\"payload\": {}}",
            "trace.jsonl:3: field 'payload': expected a non-empty object (a request body)",
        ),
        (
            "{\"input_length\": 5, \"input_lenght\": 6}",
            "trace.jsonl:3: field 'input_lenght': unknown field for mooncake_trace",
        ),
        (
            "{\"input_length\": 4, \"hash_ids\": [1, 2]}",
            "trace.jsonl:3: field 'hash_ids': input_length 4 is too short for 2 hash_ids of 4 tokens (it must be more than 4)",
        ),
        ("{\"input_length\": 5", "trace.jsonl:3: not valid JSON"),
        (
            "[1, 2]",
            "trace.jsonl:3: expected a JSON object, got a list",
        ),
    ];
    for (line, want) in cases {
        // Two good lines and a blank one first: the bad line is line 3 and is still found,
        // because the whole file is validated before anything is returned.
        let text = format!("{GOOD}\n{line}\n{GOOD}");
        let e = run("mooncake_trace", "trace.jsonl", &text).unwrap_err();
        assert!(e.starts_with(want), "{line}\n got: {e}\nwant: {want}");
    }
    let e = run(
        "mooncake_trace",
        "trace.jsonl",
        "{\"session_id\": \"s\", \"input_length\": 5}\n{\"session_id\": \"s\", \"payload\": {\"a\": 1}}\n",
    )
    .unwrap_err();
    assert!(
        e.starts_with("trace.jsonl:2: field 'session_id': session \"s\" mixes"),
        "{e}"
    );
}

#[test]
fn custom_type_errors_name_file_line_and_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "single_turn",
            "{\"text\": \"a\", \"texts\": [\"b\"]}",
            "d.jsonl:2: field 'texts': text and texts cannot be set together",
        ),
        (
            "single_turn",
            "{\"txt\": \"a\"}",
            "d.jsonl:2: field 'txt': unknown field for single_turn",
        ),
        (
            "single_turn",
            "{\"session_id\": \"s\"}",
            "d.jsonl:2: field 'text': a row needs a text or media (text/texts, image/images, audio/audios, video/videos)",
        ),
        (
            "single_turn",
            "{\"text\": \"a\", \"timestamp\": 5, \"delay\": 3}",
            "d.jsonl:2: field 'delay': timestamp and delay cannot be set together",
        ),
        (
            "single_turn",
            "{\"text\": \"a\", \"output_length\": 0}",
            "d.jsonl:2: field 'output_length': must be > 0",
        ),
        (
            "single_turn",
            "{\"texts\": [{\"name\": \"q\", \"contents\": [1]}]}",
            "d.jsonl:2: field 'texts[0].contents[0]': expected a string, got a number",
        ),
        (
            "single_turn",
            "{\"text\": \"a\", \"audio\": \"x.wav\"}",
            "d.jsonl:2: field 'audio': x.wav: no such audio file",
        ),
        (
            "single_turn",
            "{\"text\": \"a\", \"image\": \"a.png\", \"images\": [\"b.png\"]}",
            "d.jsonl:2: field 'images': image and images cannot be set together",
        ),
        (
            "multi_turn",
            "{\"turns\": [{\"text\": \"a\", \"video\": \"clip.avi\"}]}",
            "d.jsonl:2: field 'turns[0].video': clip.avi: '.avi' is not a supported video format (mp4, webm)",
        ),
        (
            "single_turn",
            "{\"image\": \"https://h/a.png\", \"image_uuids\": [\"u\"]}",
            "d.jsonl:2: field 'image_uuids': image_uuids cannot be used with the singular image field",
        ),
        (
            "single_turn",
            "{\"text\": \"a\", \"extra\": [1]}",
            "d.jsonl:2: field 'extra': expected an object, got a list",
        ),
        (
            "multi_turn",
            "{\"session_id\": \"s\", \"turns\": [{\"text\": \"a\"}, {\"text\": \"b\", \"output_length\": 0}]}",
            "d.jsonl:2: field 'turns[1].output_length': must be > 0",
        ),
        (
            "multi_turn",
            "{\"session_id\": \"s\", \"turns\": []}",
            "d.jsonl:2: field 'turns': at least one turn is needed",
        ),
        (
            "random_pool",
            "{\"text\": \"a\", \"session_id\": \"s\"}",
            "d.jsonl:2: field 'session_id': unknown field for random_pool",
        ),
    ];
    for (kind, line, want) in cases {
        let good = if *kind == "multi_turn" {
            "{\"turns\": [{\"text\": \"ok\"}]}"
        } else {
            "{\"text\": \"ok\"}"
        };
        let e = run(kind, "d.jsonl", &format!("{good}\n{line}\n")).unwrap_err();
        assert!(
            e.starts_with(want),
            "{kind} {line}\n got: {e}\nwant: {want}"
        );
    }
}

#[test]
fn document_and_file_errors() {
    let e = run(
        "inputs_json",
        "inputs.json",
        r#"{"data":[{"session_id":"a","payloads":[{"x":1}]},{"session_id":"b","payloads":[7]}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        e,
        "inputs.json: field 'data[1].payloads[0]': expected a request body (an object), got a number"
    );
    let e = run(
        "inputs_json",
        "inputs.json",
        "{\"data\": [\n  {\"payloads\": [}\n]}",
    )
    .unwrap_err();
    assert!(e.starts_with("inputs.json:2: not valid JSON"), "{e}");
    let e = run(
        "inputs_json",
        "inputs.json",
        r#"{"data":[{"model":"m","text_input":["x"]}]}"#,
    )
    .unwrap_err();
    assert!(e.contains("Triton-format"), "{e}");
    let e = run("single_turn", "empty.jsonl", "\n\n").unwrap_err();
    assert_eq!(e, "empty.jsonl: no rows (the file is empty)");
    let p = plan("/nonexistent/dir/x.jsonl", "single_turn");
    let e = build_workload(&p, tok(), Corpus::shakespeare()).unwrap_err();
    assert!(matches!(e, WorkloadError::Dataset(_)));
    assert_eq!(e.to_string(), "/nonexistent/dir/x.jsonl: no such file");
}

/// JSON values built from the fields the loaders know, so that most cases get past the
/// first checks and exercise the deeper ones.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..40).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z ]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "text",
        "texts",
        "name",
        "contents",
        "turns",
        "session_id",
        "input_length",
        "text_input",
        "messages",
        "role",
        "content",
        "tools",
        "payload",
        "payloads",
        "data",
        "hash_ids",
        "timestamp",
        "delay",
        "output_length",
        "extra",
        "type",
        "image",
        "conversations",
        "value",
    ])
    .prop_map(String::from)
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec((key(), value()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>()).to_string()),
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn arbitrary_lines_never_panic(lines in prop::collection::vec(line(), 1..5)) {
        let text = lines.join("\n");
        for kind in [
            "single_turn",
            "multi_turn",
            "random_pool",
            "mooncake_trace",
            "raw_payload",
            "inputs_json",
            "genai_perf_inputs",
        ] {
            // Ok or a named error; never a panic.
            if let Err(e) = run(kind, "p.jsonl", &text) {
                prop_assert!(e.starts_with("p.jsonl") || e.starts_with("plan."), "{}", e);
            }
        }
    }
}
