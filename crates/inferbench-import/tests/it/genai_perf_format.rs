//! The GenAI-Perf importer on small hand-written exports: bad input gives an error naming the
//! file and the JSON path, odd streams (split events, error events, an unterminated last
//! event) are handled, and no input makes it panic (property tests).

use std::path::{Path, PathBuf};

use inferbench_core::{ErrorKind, EventKind};
use inferbench_import::{ImportError, genai_perf};
use proptest::prelude::*;
use serde_json::json;

/// A fresh directory under the system temp dir, removed (with its files) when dropped; it
/// derefs to its path.
struct TempDir(tempfile::TempDir);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

fn temp_dir() -> TempDir {
    TempDir(
        tempfile::Builder::new()
            .prefix("inferbench-gp-import-")
            .tempdir()
            .expect("temp dir"),
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

/// One word per whitespace-separated piece: enough for hand-checked counts.
fn words(t: &str) -> u64 {
    t.split_whitespace().count() as u64
}

fn chunk(content: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"object": "chat.completion.chunk", "choices": [{"delta": {"content": content}}]})
    )
}

fn export(requests: serde_json::Value) -> String {
    json!({
        "experiments": [{"experiment": {"mode": "concurrency", "value": 1}, "requests": requests}],
        "version": "2.51.0", "service_kind": "openai", "endpoint": "v1/chat/completions"
    })
    .to_string()
}

fn request(ts: u64, responses: &[(u64, String)]) -> serde_json::Value {
    let payload = json!({"model": "m", "messages": [{"role": "user", "content": "a b c"}],
                         "stream": true, "max_tokens": 4});
    json!({
        "timestamp": ts,
        "request_inputs": {"payload": payload.to_string()},
        "response_timestamps": responses.iter().map(|r| r.0).collect::<Vec<_>>(),
        "response_outputs": responses.iter().map(|r| json!({"response": r.1})).collect::<Vec<_>>(),
    })
}

fn format_error(err: ImportError) -> (PathBuf, Option<String>, String) {
    match err {
        ImportError::Format {
            path,
            location,
            message,
        } => (path, location, message),
        other => panic!("expected a format error, got {other}"),
    }
}

#[test]
fn a_small_stream_becomes_frames_and_events() {
    let d = temp_dir();
    // Two events in the first response (they share its frame), [DONE] alone in the second.
    let first = format!("{}{}", chunk("x y"), chunk(" z"));
    let req = request(
        1_000,
        &[(1_500, first), (1_700, "data: [DONE]\n\n".to_string())],
    );
    write(&d, "profile_export.json", &export(json!([req])));
    let run = genai_perf::import(&d, &words).expect("imports");
    let r = &run.evidence.records[0];
    assert_eq!(run.evidence.header.anchor_unix_ns, 1_000);
    assert_eq!(r.start_ns, 0);
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.frames[0].t_ns, 500);
    assert_eq!(r.events.len(), 3);
    assert_eq!(
        (r.events[0].frame, r.events[1].frame, r.events[2].frame),
        (0, 0, 1)
    );
    assert_eq!(r.events[2].kind(), EventKind::Done);
    assert_eq!(r.end_ns, 700);
    // "x y" + " z" → 3 words; prompt "a b c" → 3.
    assert_eq!(r.tokens.output, Some(3));
    assert_eq!(r.tokens.input, Some(3));
    assert_eq!(run.version, "unknown");
    assert_eq!(run.native_definitions, "genai-perf-0.0.13");
}

#[test]
fn a_split_event_lands_where_it_ends_and_is_reported() {
    let d = temp_dir();
    let whole = chunk("x");
    let (a, b) = whole.split_at(20);
    let req = request(0, &[(10, a.to_string()), (20, b.to_string())]);
    write(&d, "profile_export.json", &export(json!([req])));
    let run = genai_perf::import(&d, &words).expect("imports");
    let r = &run.evidence.records[0];
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].frame, 1);
    assert!(
        run.losses
            .iter()
            .any(|l| l.starts_with("1 responses began inside"))
    );
}

#[test]
fn an_unterminated_last_event_is_still_parsed() {
    let d = temp_dir();
    let last = chunk("x");
    let req = request(0, &[(10, last.trim_end().to_string())]);
    write(&d, "profile_export.json", &export(json!([req])));
    let run = genai_perf::import(&d, &words).expect("imports");
    let r = &run.evidence.records[0];
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].content.as_deref(), Some("x"));
    assert!(
        run.losses
            .iter()
            .any(|l| l.contains("no terminating blank line"))
    );
}

#[test]
fn an_sse_error_event_makes_an_error_record() {
    let d = temp_dir();
    let req = request(
        0,
        &[
            (10, chunk("x")),
            (
                20,
                "event: error\ndata: {\"message\":\"boom\"}\n\n".to_string(),
            ),
        ],
    );
    write(&d, "profile_export.json", &export(json!([req])));
    let run = genai_perf::import(&d, &words).expect("imports");
    let r = &run.evidence.records[0];
    let e = r.error.as_ref().expect("error");
    assert_eq!((e.kind, e.code), (ErrorKind::Protocol, Some(502)));
    assert_eq!(r.tokens.output, None);
}

#[test]
fn truncated_json_names_the_file_and_line() {
    let d = temp_dir();
    let text = export(json!([request(0, &[(10, chunk("x"))])]));
    write(&d, "profile_export.json", &text[..text.len() / 2]);
    let (path, location, message) = format_error(genai_perf::import(&d, &words).unwrap_err());
    assert!(path.ends_with("profile_export.json"));
    assert!(location.expect("location").starts_with("line 1 column "));
    assert!(message.starts_with("not valid JSON"), "{message}");
}

#[test]
fn wrong_shapes_name_the_json_path() {
    let cases = [
        (json!({"experiments": 3}).to_string(), "experiments"),
        (
            json!({"experiments": [{"requests": [{"timestamp": "x"}]}]}).to_string(),
            "experiments[0].requests[0].timestamp",
        ),
        (
            json!({"experiments": [{"requests": [{"timestamp": 1,
                "response_timestamps": [1, 2], "response_outputs": [{"response": ""}]}]}]})
            .to_string(),
            "experiments[0].requests[0].response_outputs",
        ),
        (
            json!({"experiments": [{"requests": [{"timestamp": 1,
                "response_timestamps": [1], "response_outputs": [{"text_output": "x"}]}]}]})
            .to_string(),
            "experiments[0].requests[0].response_outputs[0].response",
        ),
        (
            json!({"experiments": [{"requests": [{"timestamp": 1,
                "request_inputs": {"payload": "{not json"},
                "response_timestamps": [], "response_outputs": []}]}]})
            .to_string(),
            "experiments[0].requests[0].request_inputs.payload",
        ),
        (
            json!({"experiments": [], "service_kind": "triton"}).to_string(),
            "service_kind",
        ),
    ];
    for (text, at) in cases {
        let d = temp_dir();
        write(&d, "profile_export.json", &text);
        let (_, location, _) = format_error(genai_perf::import(&d, &words).unwrap_err());
        assert_eq!(location.as_deref(), Some(at), "{text}");
    }
}

#[test]
fn a_bad_summary_file_is_named() {
    let d = temp_dir();
    write(&d, "profile_export.json", &export(json!([])));
    write(&d, "profile_export_genai_perf.json", "{\"request_count\": ");
    let (path, _, _) = format_error(genai_perf::import(&d, &words).unwrap_err());
    assert!(path.ends_with("profile_export_genai_perf.json"));
}

#[test]
fn not_a_run_directory() {
    let d = temp_dir();
    write(&d, "inputs.json", "{\"data\": []}");
    assert!(!genai_perf::looks_like(&d));
    assert!(matches!(
        genai_perf::import(&d, &words),
        Err(ImportError::Unrecognized { .. })
    ));
}

fn valid_export() -> String {
    export(json!([
        request(
            0,
            &[
                (10, chunk("x")),
                (20, chunk(" y")),
                (30, "data: [DONE]\n\n".into())
            ]
        ),
        request(5, &[(15, format!("{}{}", chunk("a"), chunk("b")))]),
    ]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn truncated_exports_never_panic(cut in 0usize..2000) {
        let text = valid_export();
        let cut = cut.min(text.len());
        let d = temp_dir();
        write(&d, "profile_export.json", &text[..cut]);
        let _ = genai_perf::import(&d, &words);
    }

    #[test]
    fn corrupted_exports_never_panic(pos in 0usize..2000, byte in any::<u8>()) {
        let mut bytes = valid_export().into_bytes();
        let pos = pos % bytes.len();
        bytes[pos] = byte;
        let d = temp_dir();
        std::fs::write(d.join("profile_export.json"), &bytes).expect("write");
        let _ = genai_perf::import(&d, &words);
    }

    #[test]
    fn arbitrary_response_texts_never_panic(
        texts in proptest::collection::vec(".{0,40}", 0..6),
        stamps in proptest::collection::vec(any::<u64>(), 6),
        start in any::<u64>(),
    ) {
        let responses: Vec<(u64, String)> =
            texts.into_iter().zip(stamps).map(|(t, s)| (s, t)).collect();
        let d = temp_dir();
        write(&d, "profile_export.json", &export(json!([request(start, &responses)])));
        let run = genai_perf::import(&d, &words);
        prop_assert!(run.is_ok());
    }
}
