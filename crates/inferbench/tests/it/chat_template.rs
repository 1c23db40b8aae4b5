//! `--apply-chat-template` end to end: ISL through the tokenizer directory's template,
//! synthetic prompts shortened by its cost, and the template frozen in the manifest.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use inferbench_core::plan::TokenizerSpec;
use inferbench_workload::Tokenizer;
use sha2::{Digest, Sha256};

use crate::common::{jsonl, read_json, run, stderr, tmpdir};

/// The workload crate's tokenizer fixture; its `chat_template.jinja` renders each message as
/// `role: content` and a line, then `assistant:`.
fn tokenizer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../inferbench-workload/tests/data/tokenizer")
}

fn profile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let tok = tokenizer_dir();
    let mut args = vec![
        "profile",
        "--tokenizer",
        tok.to_str().unwrap(),
        "--isl",
        "32",
        "--osl",
        "4",
        "--request-count",
        "4",
        "--concurrency",
        "2",
        "--random-seed",
        "7",
        "--export-level",
        "records",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn isl_counts_the_template_and_prompts_make_room_for_it() {
    let dir = tmpdir("chat-template");
    let o = profile(&dir, &["--apply-chat-template"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tok = Tokenizer::load(&TokenizerSpec::HuggingFace {
        path: tokenizer_dir().to_str().unwrap().into(),
    })
    .unwrap();

    // The manifest freezes the template: its file, hash, what it renders and its costs.
    let m = read_json(&dir.join("inferbench_manifest.json"));
    let ct = &m["tokenizer"]["chat_template"];
    let file = std::fs::read(tokenizer_dir().join("chat_template.jinja")).unwrap();
    assert_eq!(ct["sha256"], hex::encode(Sha256::digest(&file)));
    assert!(
        ct["source"]
            .as_str()
            .unwrap()
            .ends_with("chat_template.jinja")
    );
    assert_eq!(ct["rendered_probe"], "user: PROMPT\nassistant:");
    assert_eq!(
        ct["rendered_probe_sha256"],
        hex::encode(Sha256::digest(b"user: PROMPT\nassistant:"))
    );
    assert_eq!(m["plan"]["dataset"]["apply_chat_template"], true);
    let schema = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");

    // Each prompt is 32 tokens less the template's first-turn cost (fixed + one wrap).
    let fixed = ct["per_request_fixed_tokens"].as_u64().unwrap() as usize;
    let wrap = ct["per_message_wrap_tokens"].as_u64().unwrap() as usize;
    let inputs = read_json(&dir.join("inputs.json"));
    let mut expected: HashMap<String, u64> = HashMap::new();
    for s in inputs["data"].as_array().unwrap() {
        let body = &s["payloads"][0];
        let content = body["messages"][0]["content"].as_str().unwrap();
        assert_eq!(tok.count(content), 32 - fixed - wrap, "{content}");
        // ISL is the rendered conversation, written out here by hand from the template.
        let rendered = format!("user: {content}\nassistant:");
        expected.insert(
            s["session_id"].as_str().unwrap().to_string(),
            tok.count(&rendered) as u64,
        );
    }
    let records = jsonl(&dir.join("profile_export.jsonl"));
    assert_eq!(records.len(), 4);
    for r in &records {
        let id = r["metadata"]["conversation_id"].as_str().unwrap();
        assert_eq!(
            r["metrics"]["input_sequence_length"]["value"].as_u64(),
            Some(expected[id]),
            "{id}"
        );
    }
}

#[test]
fn without_a_template_the_flag_is_refused_by_name() {
    let dir = tmpdir("chat-template-none");
    let o = run(&[
        "profile",
        "--apply-chat-template",
        "--request-count",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--apply-chat-template needs a Hugging Face tokenizer"),
        "{e}"
    );
    assert!(!dir.join("profile_export_aiperf.json").exists());
}
