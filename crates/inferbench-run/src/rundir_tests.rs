//! Ledger packets opened as runs: our packet's evidence through the zstd decoder, its
//! manifest from `run_manifest.json`, an import's `import/`, the refusals.

use std::io::Write;
use std::path::{Path, PathBuf};

use inferbench_core::EvidenceLine;

use super::*;

/// A fresh directory and its path; the directory is removed when the guard drops.
fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::Builder::new()
        .prefix(&format!("inferbench-rundir-{name}-"))
        .tempdir()
        .unwrap();
    let p = d.path().to_path_buf();
    (d, p)
}

fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "0.1.0".into(),
        anchor_unix_ns: 7,
        benchmark_id: "bench-1".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "w".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

fn packet_manifest(dir: &Path, imported: bool) {
    let m = serde_json::json!({"schema": PACKET_SCHEMA, "source": {"imported": imported}});
    std::fs::write(dir.join(PACKET_MANIFEST), m.to_string()).unwrap();
}

/// A packet of ours: the evidence (a header line) compressed, and a run manifest naming a
/// `--profile-export-prefix`; with the guard of its directory.
fn our_packet(name: &str, with_run_manifest: bool) -> (tempfile::TempDir, PathBuf) {
    let (guard, d) = tmp(name);
    packet_manifest(&d, false);
    let line = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
    let mut enc =
        zstd::Encoder::new(std::fs::File::create(d.join(PACKET_RECORDS)).unwrap(), 3).unwrap();
    writeln!(enc, "{line}").unwrap();
    enc.finish().unwrap();
    if with_run_manifest {
        let m = serde_json::json!({"plan": {"artifacts": {"prefix": "mine"}}});
        std::fs::write(d.join(PACKET_RUN_MANIFEST), m.to_string()).unwrap();
    }
    (guard, d)
}

#[test]
fn rundir_reads_our_packet_through_the_decoder_and_refuses_writes() {
    let (_tmp, d) = our_packet("ours", true);
    let r = RunDir::open(&d).unwrap();
    assert_eq!(r.layout, Layout::Run);
    assert_eq!(r.packet(), Some(d.as_path()));
    assert_eq!(r.evidence_header().unwrap(), header());
    // The run's file names come from the run manifest's prefix; its files from `run/`.
    assert_eq!(r.names().summary_json, "mine.json");
    let e = r.inputs().unwrap_err().message;
    assert!(e.contains("/run/inputs.json"), "{e}");
    assert_eq!(r.summary().unwrap(), None, "run/mine.json is not there");
    // The manifest is read from run_manifest.json (this one is not a whole manifest).
    let e = r.manifest().unwrap_err().message;
    assert!(e.contains(PACKET_RUN_MANIFEST), "{e}");
    let e = r.writable("--write").unwrap_err().message;
    assert!(e.contains("a ledger packet is immutable: --write"), "{e}");
    // A plain directory is writable.
    let (_plain, plain) = tmp("plain");
    std::fs::write(plain.join(EVIDENCE_FILE), "").unwrap();
    assert!(RunDir::open(&plain).unwrap().writable("--write").is_ok());
}

#[test]
fn rundir_refuses_a_packet_older_than_run_manifest_in_one_line() {
    let (_old, d) = our_packet("old", false);
    let e = RunDir::open(&d).unwrap_err().message;
    assert!(e.contains("this packet predates run_manifest.json"), "{e}");
    assert_eq!(e.lines().count(), 1);
    // Evidence kept outside the ledger: said so.
    let (_absent, d) = our_packet("absent", true);
    std::fs::remove_file(d.join(PACKET_RECORDS)).unwrap();
    let e = RunDir::open(&d).unwrap_err().message;
    assert!(e.contains("records.jsonl.zst is absent"), "{e}");
}

#[test]
fn rundir_opens_an_import_packet_as_its_import() {
    let (_tmp, d) = tmp("import");
    packet_manifest(&d, true);
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data/genai_perf/G12-chat-stream");
    let to = d.join(PACKET_IMPORT);
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&fixture).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
    let r = RunDir::open(&d).unwrap();
    assert_eq!(r.layout, Layout::Imported(SourceTool::GenaiPerf));
    assert_eq!(r.path, to);
    assert_eq!(r.packet(), Some(d.as_path()));
    assert!(r.writable("--format").is_err());
    // Without its files it is refused, naming the directory.
    std::fs::remove_dir_all(&to).unwrap();
    std::fs::create_dir_all(&to).unwrap();
    let e = RunDir::open(&d).unwrap_err().message;
    assert!(
        e.contains("not a GenAI-Perf or AIPerf artifact directory"),
        "{e}"
    );
}

#[test]
fn rundir_a_manifest_json_of_another_schema_is_not_a_packet() {
    let (_tmp, d) = tmp("other-schema");
    std::fs::write(d.join(PACKET_MANIFEST), r#"{"schema":"something/1"}"#).unwrap();
    let e = RunDir::open(&d).unwrap_err().message;
    assert!(e.contains("no inferbench_evidence.jsonl here"), "{e}");
}
