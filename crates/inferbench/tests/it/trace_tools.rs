//! The trace commands (`analyze-trace`, `validate mooncake-trace`) and a BurstGPT trace
//! replayed end to end against the built-in simulated server. Expected values are worked by
//! hand from the files written here (docs/datasets.md, "Trace tools" and "burst_gpt_trace").

use std::path::Path;

use serde_json::Value;

use crate::common::*;

const MS: u64 = 1_000_000;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn analyze_trace_prints_and_writes_the_hand_analysis() {
    let dir = tmpdir("analyze");
    // A [1,2,3] isl 20, B [1,2,4] isl 24, C [5] isl 8, D none isl 12.
    let f = write(
        &dir,
        "t.jsonl",
        "{\"input_length\": 20, \"output_length\": 4, \"hash_ids\": [1, 2, 3]}\n\
         {\"input_length\": 24, \"output_length\": 2, \"hash_ids\": [1, 2, 4]}\n\
         {\"input_length\": 8, \"output_length\": 6, \"hash_ids\": [5]}\n\
         {\"input_length\": 12, \"output_length\": 8}\n",
    );
    let out = dir.join("report.json");
    let o = run(&[
        "analyze-trace",
        &f,
        "--block-size",
        "4",
        "--output-file",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("Total requests:  4"), "{s}");
    assert!(s.contains("Unique prefixes: 5"), "{s}");
    // Context lengths 8, 8, 0, 0: mean 4.00, max 8.00.
    assert!(s.contains("Context Length"), "{s}");
    let v: Value = read_json(&out);
    // Hit rates 0, 2/3, 0 → mean 2/9.
    assert!((v["cache_hit_rate"].as_f64().unwrap() - 2.0 / 9.0).abs() < 1e-12);
    assert_eq!(v["context_length_stats"]["mean"], 4.0);
    assert_eq!(v["block_size"], 4);
    // Two sizes: two reports, a JSON list.
    let o = run(&[
        "analyze-trace",
        &f,
        "--block-size",
        "4,16",
        "--output-file",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = read_json(&out);
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    assert_eq!(v[1]["unique_prompt_length_stats"]["min"], -12.0);
    let o = run(&["analyze-trace", &f, "--block-size", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--block-size"), "{}", stderr(&o));
}

#[test]
fn validate_mooncake_trace_passes_or_names_each_bad_line() {
    let dir = tmpdir("validate");
    let good = write(
        &dir,
        "g.jsonl",
        "{\"input_length\": 4}\n{\"text_input\": \"hi\"}\n",
    );
    let o = run(&["validate", "mooncake-trace", &good]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Validation passed: 2 rows are Mooncake-compatible."));
    let bad = write(
        &dir,
        "b.jsonl",
        "{\"input_length\": 4}\n{\"output_length\": 3}\n{\"input_length\": -1}\n",
    );
    let o = run(&["validate", "mooncake-trace", &bad]);
    assert_eq!(o.status.code(), Some(1));
    let s = stdout(&o);
    assert!(s.contains("Validation failed with 2 error(s):"), "{s}");
    assert!(s.contains(&format!("{bad}:2: field 'input_length'")), "{s}");
    assert!(s.contains(&format!("{bad}:3: field 'input_length'")), "{s}");
}

#[test]
fn a_burst_gpt_csv_is_replayed_at_its_timestamps() {
    let dir = tmpdir("burst");
    let f = write(
        &dir,
        "burst.csv",
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
         0,ChatGPT,12,3,15,Conversation log\n\
         0.1,ChatGPT,7,2,9,Conversation log\n\
         0.25,GPT-4,9,4,13,API log\n",
    );
    let out = dir.join("run");
    let o = run(&[
        "profile",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        out.to_str().unwrap(),
        "--input-file",
        &f,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let start = evidence_lines(&out)
        .iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "profiling")
        .expect("a profiling phase")["start_ns"]
        .as_u64()
        .unwrap();
    let mut recs: Vec<Value> = evidence_records(&out)
        .into_iter()
        .filter(|r| r["phase"] == "profiling")
        .collect();
    recs.sort_by_key(|r| r["planned_ns"].as_u64().unwrap());
    let got: Vec<(String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["conversation_id"].as_str().unwrap().to_string(),
                r["planned_ns"].as_u64().unwrap() - start,
            )
        })
        .collect();
    // Seconds → ms; one session per row; fixed schedule from the first row's timestamp.
    assert_eq!(
        got,
        [
            ("session_000000".to_string(), 0),
            ("session_000001".to_string(), 100 * MS),
            ("session_000002".to_string(), 250 * MS),
        ]
    );
}
