//! Trace synthesis and replay controls end to end (docs/datasets.md, "Trace synthesis and
//! replay controls"): the real binary against its built-in simulated server. Expected
//! values are worked out by hand from the trace files written below and AIPerf's rules.

use std::path::Path;

use serde_json::Value;

use crate::common::*;

const MS: u64 = 1_000_000;

fn profile(dir: &Path, input: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "profile",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
        "--input-file",
        input.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn records(dir: &Path) -> Vec<Value> {
    let mut r: Vec<Value> = evidence_records(dir)
        .into_iter()
        .filter(|r| r["phase"] == "profiling")
        .collect();
    r.sort_by_key(|r| (r["planned_ns"].as_u64(), r["turn_index"].as_u64()));
    r
}

fn phase_start(dir: &Path) -> u64 {
    evidence_lines(dir)
        .iter()
        .find(|l| l["line"] == "phase" && l["phase"] == "profiling")
        .expect("a profiling phase line")["start_ns"]
        .as_u64()
        .unwrap()
}

#[test]
fn synthesis_rescales_a_mooncake_trace_and_is_recorded() {
    let dir = tmpdir("replay-synthesis");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("mc.jsonl");
    std::fs::write(
        &trace,
        concat!(
            "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1, 2]}\n",
            "{\"timestamp\": 400, \"input_length\": 10, \"output_length\": 3, \"hash_ids\": [1, 3]}\n",
            "{\"timestamp\": 800, \"input_length\": 900, \"output_length\": 3, \"hash_ids\": [4, 5]}\n",
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = profile(
        &out,
        &trace,
        &[
            "--custom-dataset-type",
            "mooncake_trace",
            "--isl-block-size",
            "4",
            "--synthesis-speedup-ratio",
            "2",
            "--synthesis-prefix-len-multiplier",
            "2",
            "--synthesis-prompt-len-multiplier",
            "1.5",
            "--synthesis-output-len-multiplier",
            "1.5",
            "--synthesis-max-isl",
            "100",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Row 3 (900 > 100 tokens) is dropped. Id 1 is shared: its prefix [1] becomes 2 blocks
    // (8 tokens), the prompt 10 − 4 = 6 tokens × 1.5 = 9: ISL 17 each. Outputs 2 × 1.5 = 3
    // and 3 × 1.5 = 4.5 → 4. Timestamps 0 and 400 / 2 = 200 ms.
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    let start = phase_start(&out);
    let offs: Vec<u64> = recs
        .iter()
        .map(|r| r["planned_ns"].as_u64().unwrap() - start)
        .collect();
    assert_eq!(offs, [0, 200 * MS]);
    let isl: Vec<u64> = recs
        .iter()
        .map(|r| r["tokens"]["input"].as_u64().unwrap())
        .collect();
    assert_eq!(isl, [17, 17]);
    let osl: Vec<u64> = recs
        .iter()
        .map(|r| r["requested_output_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(osl, [3, 4]);
    let m = read_json(&out.join("inferbench_manifest.json"));
    let s = &m["plan"]["dataset"]["replay"]["synthesis"];
    assert_eq!(s["speedup_ratio"], 2.0);
    assert_eq!(s["prompt_len_multiplier"], 1.5);
    assert_eq!(s["max_isl"], 100);
}

#[test]
fn inter_turn_delay_cap_clamps_a_dag_delay() {
    let dir = tmpdir("replay-delay-cap");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("dag.jsonl");
    // The second turn waits 60 s as recorded; the 0.2 s cap makes it 200 ms after the
    // first reply.
    std::fs::write(
        &trace,
        concat!(
            "{\"session_id\": \"a\", \"turns\": [",
            "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 2}, ",
            "{\"messages\": [{\"role\": \"user\", \"content\": \"again\"}], \"max_tokens\": 2, \"delay\": 60000}",
            "]}\n"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = profile(
        &out,
        &trace,
        &[
            "--custom-dataset-type",
            "dag_jsonl",
            "--inter-turn-delay-cap-seconds",
            "0.2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    let gap = recs[1]["planned_ns"].as_u64().unwrap() - recs[0]["end_ns"].as_u64().unwrap();
    assert!((200 * MS..1000 * MS).contains(&gap), "gap {gap} ns");
    let m = read_json(&out.join("inferbench_manifest.json"));
    assert_eq!(
        m["plan"]["dataset"]["replay"]["inter_turn_delay_cap_seconds"],
        0.2
    );
    // Not a dag/weka/tracelab file: refused by name.
    let o = profile(
        &dir.join("out2"),
        &trace,
        &[
            "--custom-dataset-type",
            "multi_turn",
            "--inter-turn-delay-cap-seconds",
            "1",
        ],
    );
    assert!(!o.status.success());
}

#[test]
fn baseten_only_replay_knobs_are_refused_for_other_datasets() {
    let dir = tmpdir("replay-refused");
    let o = run(&[
        "profile",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
        "--replay-speedup",
        "10",
        "--no-force-min-tokens",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("--replay-speedup, --force-min-tokens/--no-force-min-tokens are only supported by the baseten_trace loader; provide --input-file and --custom-dataset-type baseten_trace"),
        "{e}"
    );
    let o = run(&["profile", "--ui", "none", "--synthesis-speedup-ratio", "0"]);
    assert!(stderr(&o).contains("--synthesis-speedup-ratio 0: must be a number > 0"));
}

/// The baseten_trace fixture of the workload crate (its rows are tabled in that crate's
/// tests/it/baseten.rs).
fn baseten_fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-workload/tests/data/datasets/baseten.parquet")
}

#[test]
fn a_baseten_trace_replays_at_its_recorded_times_sped_up() {
    let dir = tmpdir("replay-baseten");
    let out = dir.join("out");
    let o = profile(
        &out,
        &baseten_fixture(),
        &["--replay-speedup", "10", "--max-idle-gap-cap-seconds", "60"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Detected, fixed schedule on; times 0, 1000, 3000, 2000 ms ÷ 10: the session starts
    // at 0, 100 and 200 ms, and s1's second turn (beta) not before 300 ms.
    let recs = records(&out);
    assert_eq!(recs.len(), 4);
    let start = phase_start(&out);
    let planned: Vec<(String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["conversation_id"].as_str().unwrap().to_string(),
                r["planned_ns"].as_u64().unwrap() - start,
            )
        })
        .collect();
    assert_eq!(planned[0], ("session_000000".to_string(), 0));
    assert_eq!(planned[1], ("s1".to_string(), 100 * MS));
    assert_eq!(planned[2], ("s2".to_string(), 200 * MS));
    assert_eq!(planned[3].0, "s1");
    assert!(planned[3].1 >= 300 * MS, "{planned:?}");
    // The recorded outputs are max_tokens and min_tokens on the wire; the KV hints too.
    let inputs = read_json(&out.join("inputs.json"));
    let bodies: Vec<&Value> = inputs["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["payloads"].as_array().unwrap())
        .collect();
    let alpha = bodies
        .iter()
        .find(|b| b["messages"][0]["content"] == "alpha")
        .expect("alpha's body");
    assert_eq!(alpha["min_tokens"], 6);
    assert_eq!(alpha["hash_ids"], serde_json::json!([1, 2]));
    assert_eq!(alpha["block_size"], 64);
    let m = read_json(&out.join("inferbench_manifest.json"));
    let b = &m["plan"]["dataset"]["replay"]["baseten"];
    assert_eq!(b["speedup"], 10.0);
    assert_eq!(b["max_idle_gap_cap_seconds"], 60.0);
    assert_eq!(
        b["given"],
        serde_json::json!(["--replay-speedup", "--max-idle-gap-cap-seconds"])
    );
    assert_eq!(m["dataset"]["kind"], "baseten_trace");
}
