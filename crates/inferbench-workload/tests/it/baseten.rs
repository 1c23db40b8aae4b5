//! baseten_trace: the fixtures written by pyarrow (`tests/data/datasets/make_columnar.py`, in
//! Parquet with snappy and with zstd pages, Arrow IPC file and stream) replayed under each
//! of AIPerf's rules, with the expected times, sessions and bodies worked by hand; bad cells
//! named by file, column and row.
//!
//! The fixture's rows, in file order (ts = timestamp_start_unix_ms − 1700000000000):
//!
//! | row | ts   | prompt | in | out | total_hashes | provided | poor | block | e2e |
//! |-----|------|--------|----|-----|--------------|----------|------|-------|-----|
//! | 1   | 1000 | alpha  | 3  | 6   | [1, 2]       | s1       | 7    | 64    | 400 |
//! | 2   | 0    | solo   | 2  | 0   | null         | null     | 9    | null  | —   |
//! | 3   | 3000 | beta   | 4  | 8   | [1, 2, 3]    | s1       | 7    | 64    | 500 |
//! | 4   | 2000 | gamma  | 5  | 5   | []           | s2       | 8    | 64    | 100 |

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_core::workload::Payload;
use inferbench_workload::dataset::{BuiltWorkload, DatasetKind, build_workload};
use inferbench_workload::{Corpus, Tokenizer};
use serde_json::{Value, json};

fn tok() -> &'static Tokenizer {
    common::builtin()
}

fn data(name: &str) -> String {
    common::data(name)
}

fn plan_for(file: &str) -> RunPlan {
    let mut p = common::base_plan(EndpointType::Chat);
    p.dataset.input_file = Some(file.to_string());
    p
}

fn build(p: &RunPlan) -> Result<BuiltWorkload, String> {
    build_workload(p, tok(), Corpus::shakespeare()).map_err(|e| e.to_string())
}

fn body(p: &Payload) -> Value {
    serde_json::from_str(&p.body).unwrap()
}

/// (session, turn, prompt, timestamp ms, delay ms) of one payload.
type Shape = (String, u32, String, Option<f64>, Option<f64>);

/// The [`Shape`] of every payload, in workload order.
fn shape(w: &BuiltWorkload) -> Vec<Shape> {
    w.workload
        .payloads
        .iter()
        .map(|p| {
            (
                p.conversation_id.clone(),
                p.turn_index,
                body(p)["messages"][0]["content"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                p.timestamp_ms,
                p.delay_ms,
            )
        })
        .collect()
}

fn row(s: &str, t: u32, prompt: &str, ts: Option<f64>, delay: Option<f64>) -> Shape {
    (s.to_string(), t, prompt.to_string(), ts, delay)
}

#[test]
fn every_container_is_detected_and_gives_the_same_workload() {
    let base = build(&plan_for(&data("baseten.parquet"))).unwrap();
    assert_eq!(base.kind, DatasetKind::BasetenTrace);
    // A timestamp on the first turn: fixed schedule on, as AIPerf does for the column.
    assert!(base.has_timestamps);
    for f in [
        "baseten_zstd.parquet",
        "baseten.arrow",
        "baseten_stream.ipc",
    ] {
        let w = build(&plan_for(&data(f))).unwrap();
        assert_eq!(w.kind, DatasetKind::BasetenTrace, "{f}");
        assert_eq!(w.workload, base.workload, "{f}");
    }
    let mut named = plan_for(&data("baseten.parquet"));
    named.dataset.custom_dataset_type = Some("baseten_trace".into());
    assert_eq!(build(&named).unwrap().workload, base.workload);
}

#[test]
fn open_loop_replay_keeps_every_recorded_time_and_the_sessions() {
    let w = build(&plan_for(&data("baseten.parquet"))).unwrap();
    // provided_session_id groups rows 1 and 3 (s1); row 2 has none and gets its own
    // session; sessions in order of first time: the null row (0), s1 (1000), s2 (2000).
    assert_eq!(
        shape(&w),
        [
            row("session_000000", 0, "solo", Some(0.0), None),
            row("s1", 0, "alpha", Some(1000.0), None),
            row("s1", 1, "beta", Some(3000.0), None),
            row("s2", 0, "gamma", Some(2000.0), None),
        ]
    );
    let p = &w.workload.payloads;
    // s1 has two rows: sent with its history (earlier prompts and live responses).
    assert_eq!(
        p.iter().map(|x| x.history).collect::<Vec<_>>(),
        [false, true, true, false]
    );
    // max_tokens and min_tokens are the recorded output (0 → 1); hash_ids when not empty;
    // block_size when not null.
    let b: Vec<Value> = p.iter().map(body).collect();
    assert_eq!(b[0]["max_completion_tokens"], 1);
    assert_eq!(b[0]["min_tokens"], 1);
    assert!(b[0].get("hash_ids").is_none() && b[0].get("block_size").is_none());
    assert_eq!(
        (&b[1]["max_completion_tokens"], &b[1]["min_tokens"]),
        (&json!(6), &json!(6))
    );
    assert_eq!(
        (&b[1]["hash_ids"], &b[1]["block_size"]),
        (&json!([1, 2]), &json!(64))
    );
    assert_eq!(b[2]["hash_ids"], json!([1, 2, 3]));
    assert_eq!(b[2]["min_tokens"], 8);
    assert!(b[3].get("hash_ids").is_none());
    assert_eq!(
        (&b[3]["block_size"], &b[3]["min_tokens"]),
        (&json!(64), &json!(5))
    );
    // The prompt is sent as recorded.
    assert_eq!(b[1]["messages"][0]["content"], "alpha");
}

#[test]
fn replay_speedup_divides_the_times() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.speedup = Some(2.0);
    let ts: Vec<Option<f64>> = shape(&build(&p).unwrap())
        .into_iter()
        .map(|r| r.3)
        .collect();
    assert_eq!(ts, [Some(0.0), Some(500.0), Some(1500.0), Some(1000.0)]);
}

#[test]
fn closed_loop_turns_wait_the_recorded_think_time() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.open_loop = false;
    // beta: its gap after alpha (3000 − 1000) less alpha's recorded 400 ms = 1600 ms after
    // alpha ends; the session starts keep their times.
    assert_eq!(
        shape(&build(&p).unwrap()),
        [
            row("session_000000", 0, "solo", Some(0.0), None),
            row("s1", 0, "alpha", Some(1000.0), None),
            row("s1", 1, "beta", None, Some(1600.0)),
            row("s2", 0, "gamma", Some(2000.0), None),
        ]
    );
    // At speed-up 2: gap 1500 − 500 = 1000, less 400 / 2 = 800.
    p.dataset.replay.baseten.speedup = Some(2.0);
    assert_eq!(shape(&build(&p).unwrap())[2].4, Some(800.0));
    // The inter-turn cap clamps the think time (0.5 s → 500 ms).
    p.dataset.replay.inter_turn_delay_cap_seconds = Some(0.5);
    assert_eq!(shape(&build(&p).unwrap())[2].4, Some(500.0));
}

#[test]
fn idle_gaps_are_capped_over_all_sessions() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.max_idle_gap_cap_seconds = Some(0.5);
    // In time order 0, 1000, 2000, 3000: each 1000 ms gap becomes 500.
    let ts: Vec<Option<f64>> = shape(&build(&p).unwrap())
        .into_iter()
        .map(|r| r.3)
        .collect();
    assert_eq!(ts, [Some(0.0), Some(500.0), Some(1500.0), Some(1000.0)]);
    // Closed loop: only session starts carry times (0, 1000, 2000 → 0, 500, 1000).
    p.dataset.replay.baseten.open_loop = false;
    let ts: Vec<Option<f64>> = shape(&build(&p).unwrap())
        .into_iter()
        .map(|r| r.3)
        .collect();
    assert_eq!(ts, [Some(0.0), Some(500.0), None, Some(1000.0)]);
}

#[test]
fn open_loop_strict_makes_every_row_its_own_session() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.open_loop_strict = true;
    let w = build(&p).unwrap();
    assert_eq!(
        shape(&w),
        [
            row("session_000000#0", 0, "solo", Some(0.0), None),
            row("s1#0", 0, "alpha", Some(1000.0), None),
            row("s1#1", 0, "beta", Some(3000.0), None),
            row("s2#0", 0, "gamma", Some(2000.0), None),
        ]
    );
    assert!(w.workload.payloads.iter().all(|x| !x.history));
}

#[test]
fn the_session_column_can_be_the_poor_mans() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.session_column = Some("poor_man_session_id".into());
    // 7: rows 1 and 3; 9: row 2; 8: row 4; ordered by first time.
    let ids: Vec<(String, u32)> = shape(&build(&p).unwrap())
        .into_iter()
        .map(|r| (r.0, r.1))
        .collect();
    assert_eq!(
        ids,
        [
            ("9".to_string(), 0),
            ("7".to_string(), 0),
            ("7".to_string(), 1),
            ("8".to_string(), 0)
        ]
    );
}

#[test]
fn kv_hints_and_min_tokens_can_be_left_out() {
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.baseten.omit_kv_hints = true;
    p.dataset.replay.baseten.force_min_tokens = false;
    for x in &build(&p).unwrap().workload.payloads {
        let b = body(x);
        for k in ["hash_ids", "block_size", "min_tokens"] {
            assert!(b.get(k).is_none(), "{k} in {b}");
        }
    }
    // With the loader writing them, a user's value for the same key is refused, naming the
    // flag that lets it through.
    let mut p = plan_for(&data("baseten.parquet"));
    p.extra_inputs.insert("min_tokens".into(), json!(3));
    p.extra_inputs.insert("block_size".into(), json!(16));
    let e = build(&p).unwrap_err();
    assert!(
        e.contains("--extra-inputs min_tokens is overwritten per-turn by the baseten_trace loader; pass --no-force-min-tokens to send your value instead; --extra-inputs block_size is overwritten per-turn by the baseten_trace loader; pass --omit-kv-hints"),
        "{e}"
    );
}

#[test]
fn synthesis_filters_caps_and_scales_the_recorded_lengths() {
    // max ISL 3 drops beta (4) and gamma (5); the times still start from the file's
    // earliest row.
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.synthesis.max_isl = Some(3);
    let s: Vec<(String, Option<f64>)> = shape(&build(&p).unwrap())
        .into_iter()
        .map(|r| (r.2, r.3))
        .collect();
    assert_eq!(
        s,
        [
            ("solo".to_string(), Some(0.0)),
            ("alpha".to_string(), Some(1000.0))
        ]
    );
    // Output × 1.5 (half to even: 1.5 → 2, 7.5 → 8), then capped at 9.
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.synthesis.output_len_multiplier = 1.5;
    p.dataset.replay.synthesis.max_osl = Some(9);
    let outs: Vec<Value> = build(&p)
        .unwrap()
        .workload
        .payloads
        .iter()
        .map(|x| body(x)["min_tokens"].clone())
        .collect();
    assert_eq!(outs, [json!(2), json!(9), json!(9), json!(8)]);
    // The prompt-reshaping multipliers and the synthesis speed-up are refused.
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.synthesis.speedup_ratio = 2.0;
    assert!(build(&p).unwrap_err().contains(
        "--synthesis-speedup-ratio is not supported with baseten_trace; use --replay-speedup"
    ));
    let mut p = plan_for(&data("baseten.parquet"));
    p.dataset.replay.synthesis.prompt_len_multiplier = 2.0;
    p.dataset.replay.synthesis.prefix_root_multiplier = 2;
    assert!(build(&p).unwrap_err().contains(
        "--synthesis-prefix-root-multiplier, --synthesis-prompt-len-multiplier are not supported with baseten_trace"
    ));
}

#[test]
fn session_sampling_keeps_whole_sessions_and_is_seeded() {
    for seed in 0..20u64 {
        let mut p = plan_for(&data("baseten.parquet"));
        p.random_seed = Some(seed);
        p.dataset.replay.baseten.session_sample_ratio = Some(0.5);
        // A session is always kept, so the workload is never empty.
        let s = shape(&build(&p).unwrap());
        let alpha = s.iter().any(|r| r.2 == "alpha");
        let beta = s.iter().any(|r| r.2 == "beta");
        assert_eq!(alpha, beta, "seed {seed}: s1 split");
        assert!(s.iter().any(|r| r.0 == "s1" || r.0 == "s2"), "seed {seed}");
        // The times keep the file's origin (the earliest row, sampled out or not).
        if alpha {
            assert_eq!(s.iter().find(|r| r.2 == "alpha").unwrap().3, Some(1000.0));
        }
        assert_eq!(shape(&build(&p).unwrap()), s, "seed {seed}: not repeatable");
    }
}

#[test]
fn a_generated_session_id_never_takes_one_the_file_uses() {
    // Row 1 has no session; row 2's session is literally "session_000000": the first
    // generated id is skipped, and the two rows stay two sessions.
    let f = Written::parquet(
        "t.parquet",
        cols(Some((
            "provided_session_id",
            strs(vec![None, Some("session_000000")]),
        ))),
    );
    let ids: Vec<String> = shape(&build(&plan_for(&f.path())).unwrap())
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(ids, ["session_000001", "session_000000"]);
}

#[test]
fn session_sampling_needs_a_session_column() {
    let f = Written::parquet("t.parquet", cols(None));
    let mut p = plan_for(&f.path());
    p.dataset.replay.baseten.session_sample_ratio = Some(0.5);
    assert_eq!(
        build(&p).unwrap_err(),
        format!(
            "{}: --trace-session-sample-ratio samples sessions, and this file has neither provided_session_id nor poor_man_session_id",
            f.path()
        )
    );
}

#[test]
fn the_baseten_knobs_are_refused_for_other_datasets() {
    let mut p = plan_for(&data("mooncake.jsonl"));
    p.dataset.replay.baseten.given = vec!["--replay-speedup".into(), "--omit-kv-hints".into()];
    assert!(
        build(&p).unwrap_err().contains(
            "--replay-speedup, --omit-kv-hints are only supported by the baseten_trace loader, but the dataset is mooncake_trace"
        )
    );
    let mut p = common::base_plan(EndpointType::Chat);
    p.dataset.replay.baseten.given = vec!["--open-loop-strict".into()];
    assert!(build(&p).unwrap_err().contains(
        "--open-loop-strict is only supported by the baseten_trace loader; provide --input-file and --custom-dataset-type baseten_trace"
    ));
}

// ---------------------------------------------------------------- bad files

/// A Parquet file of the given columns in a fresh directory, removed (with the directory)
/// on drop.
struct Written {
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Written {
    fn parquet(name: &str, cols: Vec<(&str, ArrayRef)>) -> Written {
        let dir = tempfile::Builder::new()
            .prefix("ib-baseten-")
            .tempdir()
            .unwrap();
        let path = dir.path().join(name);
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let f = std::fs::File::create(&path).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        Written {
            file: path,
            _dir: dir,
        }
    }
    fn path(&self) -> String {
        self.file.display().to_string()
    }
}

fn ints(v: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn strs(v: Vec<Option<&str>>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

/// The four required columns of two good rows, with `bad` replacing one of them.
fn cols(bad: Option<(&'static str, ArrayRef)>) -> Vec<(&'static str, ArrayRef)> {
    let mut c: Vec<(&str, ArrayRef)> = vec![
        ("timestamp_start_unix_ms", ints(vec![Some(5), Some(6)])),
        ("prompt", strs(vec![Some("a"), Some("b")])),
        ("input_tokens", ints(vec![Some(1), Some(1)])),
        ("output_tokens", ints(vec![Some(1), Some(1)])),
    ];
    if let Some((name, a)) = bad {
        match c.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = a,
            None => c.push((name, a)),
        }
    }
    c
}

#[test]
fn a_bad_cell_is_named_by_file_column_and_row() {
    let good = Written::parquet("t.parquet", cols(None));
    assert_eq!(
        build(&plan_for(&good.path()))
            .unwrap()
            .workload
            .payloads
            .len(),
        2
    );
    for (bad, want) in [
        (
            ("output_tokens", ints(vec![Some(1), Some(-3)])),
            "field 'output_tokens': row 2: -3 is not an integer ≥ 0",
        ),
        (
            ("prompt", strs(vec![None, Some("b")])),
            "field 'prompt': row 1: is null (a required column)",
        ),
        (
            ("prompt", ints(vec![Some(1), Some(2)])),
            "field 'prompt': row 1: expected a string column, found Int64",
        ),
        (
            ("block_size", ints(vec![Some(64), Some(0)])),
            "field 'block_size': row 2: must be at least 1",
        ),
        (
            ("timestamp_start_unix_ms", strs(vec![Some("5"), Some("6")])),
            "field 'timestamp_start_unix_ms': row 1: expected an integer column, found Utf8",
        ),
    ] {
        let f = Written::parquet("t.parquet", cols(Some(bad)));
        let e = build(&plan_for(&f.path())).unwrap_err();
        assert_eq!(e, format!("{}: {want}", f.path()));
    }
    // A list with a negative hash.
    let hashes =
        arrow_array::ListArray::from_iter_primitive::<arrow_array::types::Int64Type, _, _>(vec![
            Some(vec![Some(1)]),
            Some(vec![Some(2), Some(-1)]),
        ]);
    let f = Written::parquet("t.parquet", cols(Some(("total_hashes", Arc::new(hashes)))));
    let e = build(&plan_for(&f.path())).unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: field 'total_hashes': row 2: item 1: -1 is not an integer ≥ 0",
            f.path()
        )
    );
    // A missing column is named with the ones required.
    let mut c = cols(None);
    c.remove(1);
    let f = Written::parquet("t.parquet", c);
    assert_eq!(
        build(&plan_for(&f.path())).unwrap_err(),
        format!(
            "{}: missing column(s) prompt (a baseten_trace has timestamp_start_unix_ms, prompt, input_tokens, output_tokens)",
            f.path()
        )
    );
}

#[test]
fn a_file_that_is_not_columnar_is_named() {
    let mut p = plan_for(&data("mooncake.jsonl"));
    p.dataset.custom_dataset_type = Some("baseten_trace".into());
    let e = build(&p).unwrap_err();
    assert!(
        e.ends_with(
            "mooncake.jsonl: is neither Parquet (PAR1) nor Arrow IPC (ARROW1, or a stream): baseten_trace reads those"
        ),
        "{e}"
    );
    // Truncated: the magic is there, the footer is not.
    let bytes = std::fs::read(data("baseten.parquet")).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("ib-baseten-cut-")
        .tempdir()
        .unwrap();
    let cut = dir.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = build(&plan_for(&cut.display().to_string())).unwrap_err();
    assert!(
        e.contains("cut.parquet: not a readable Parquet file: "),
        "{e}"
    );
}

// ---------------------------------------------------------------- no panics

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A fixture with bytes overwritten or cut short is read or refused with the file named,
    /// never a panic.
    #[test]
    fn damaged_columnar_files_never_panic(
        which in 0usize..4,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let name = ["baseten.parquet", "baseten_zstd.parquet", "baseten.arrow", "baseten_stream.ipc"][which];
        let mut bytes = std::fs::read(data(name)).unwrap();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len()));
        }
        if let Err(e) = inferbench_workload::dataset::check_baseten_bytes("f.parquet", &bytes) {
            prop_assert!(e.to_string().starts_with("f.parquet"), "{}", e);
        }
    }
}
