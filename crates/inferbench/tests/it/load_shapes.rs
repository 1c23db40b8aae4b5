//! Load shapes against the simulated server: planned send times, what was sent, stop rules,
//! cancellation, and the schedule verdict. Every server binds 127.0.0.1 on port 0.

use std::path::Path;

use serde_json::Value;

use crate::common;

use common::*;

/// (phase lines, records sorted by id) of a run directory's evidence.
fn evidence(dir: &Path) -> (Vec<Value>, Vec<Value>) {
    let lines = evidence_lines(dir);
    let phases = lines
        .iter()
        .filter(|l| l["line"] == "phase")
        .cloned()
        .collect();
    let mut recs: Vec<Value> = lines
        .into_iter()
        .filter(|l| l["line"] == "record")
        .collect();
    recs.sort_by_key(|r| r["id"].as_u64().unwrap());
    (phases, recs)
}

fn summary(dir: &Path) -> Value {
    read_json(&dir.join("profile_export_aiperf.json"))
}

fn planned_offsets(dir: &Path) -> Vec<u64> {
    let (phases, recs) = evidence(dir);
    let start = phases.iter().find(|p| p["phase"] == "profiling").unwrap()["start_ns"]
        .as_u64()
        .unwrap();
    recs.iter()
        .filter(|r| r["phase"] == "profiling")
        .map(|r| r["planned_ns"].as_u64().unwrap() - start)
        .collect()
}

const FAST: [&str; 8] = [
    "--isl",
    "8",
    "--osl",
    "4",
    "--ui",
    "none",
    "--sim-itl-ms",
    "0.2",
];

#[test]
fn constant_rate_plans_exactly_k_over_rate_and_sends_on_time() {
    let dir = tmpdir("constant");
    let mut args = vec![
        "profile",
        "--request-rate",
        "200",
        "--arrival-pattern",
        "constant",
        "--request-count",
        "20",
        "--streaming",
        "--sim-ttft-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // Request k is planned at k / 200 s = k × 5 ms after the phase start.
    let offs = planned_offsets(&dir);
    assert_eq!(offs, (0..20u64).map(|k| k * 5_000_000).collect::<Vec<_>>());
    let (_, recs) = evidence(&dir);
    for r in &recs {
        assert!(
            r["start_ns"].as_u64() >= r["planned_ns"].as_u64(),
            "sent before planned"
        );
    }
    let s = summary(&dir);
    assert_eq!(s["target_request_rate"]["avg"], 200.0);
    // 19 gaps of 5 ms: the scheduled rate is exactly 200/s.
    assert!((s["scheduled_request_rate"]["avg"].as_f64().unwrap() - 200.0).abs() < 1e-9);
    assert!(s["schedule_lag"]["count"].as_u64() == Some(20));
    assert!(s.get("schedule_kept").is_some());
    assert_eq!(s["request_count"]["avg"], 20.0);
}

#[test]
fn poisson_arrivals_depend_only_on_the_seed() {
    let mut runs = Vec::new();
    for (seed, isl) in [("5", "8"), ("5", "16"), ("6", "8")] {
        let dir = tmpdir("poisson");
        let o = run(&[
            "profile",
            "--request-rate",
            "400",
            "--request-count",
            "30",
            "--random-seed",
            seed,
            "--isl",
            isl,
            "--osl",
            "2",
            "--ui",
            "none",
            "--sim-ttft-ms",
            "0",
            "--sim-itl-ms",
            "0",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        runs.push(planned_offsets(&dir));
    }
    // Same seed: the same planned offsets, even with another dataset (ISL 16 vs 8).
    assert_eq!(runs[0], runs[1]);
    assert_ne!(runs[0], runs[2]);
    assert_eq!(runs[0][0], 0);
    assert!(runs[0].windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn benchmark_duration_stops_issuing_and_the_grace_period_cancels_the_rest() {
    // 40 requests/s for 0.5 s against a server that takes 3 s to answer, grace 0.2 s:
    // about 20 requests are issued, none finishes, all are cancelled at 0.7 s.
    let dir = tmpdir("duration");
    let o = run(&[
        "profile",
        "--request-rate",
        "40",
        "--arrival-pattern",
        "constant",
        "--benchmark-duration",
        "0.5",
        "--benchmark-grace-period",
        "0.2",
        "--streaming",
        "--isl",
        "8",
        "--osl",
        "4",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "3000",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    // Every request failed (cancelled): the run says so.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let offs = planned_offsets(&dir);
    // Planned at k × 25 ms, all before 500 ms: k = 0..=19.
    assert_eq!(offs, (0..20u64).map(|k| k * 25_000_000).collect::<Vec<_>>());
    let (phases, recs) = evidence(&dir);
    let start = phases[0]["start_ns"].as_u64().unwrap();
    for r in &recs {
        assert_eq!(r["cancelled"], true);
        assert_eq!(r["error"]["kind"], "cancelled");
        let at = r["cancel_ns"].as_u64().unwrap() - start;
        assert!(
            at >= 700_000_000,
            "cancelled at {at} ns, before the grace period ended"
        );
    }
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("inferbench_manifest.json")).unwrap(),
    )
    .unwrap();
    assert!(m["stop_rule"].as_str().unwrap().contains("duration 0.5 s"));
}

#[test]
fn cancellation_rate_cancels_the_chosen_requests_after_the_delay() {
    let mut chosen = Vec::new();
    for _ in 0..2 {
        let dir = tmpdir("cancel");
        let o = run(&[
            "profile",
            "--concurrency",
            "8",
            "--request-count",
            "40",
            "--random-seed",
            "9",
            "--request-cancellation-rate",
            "50",
            "--request-cancellation-delay",
            "0.05",
            "--streaming",
            "--isl",
            "8",
            "--osl",
            "4",
            "--ui",
            "none",
            "--sim-ttft-ms",
            "300",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (_, recs) = evidence(&dir);
        assert_eq!(recs.len(), 40);
        let ids: Vec<u64> = recs
            .iter()
            .filter(|r| r["cancelled"] == true)
            .map(|r| r["id"].as_u64().unwrap())
            .collect();
        // Roughly half (binomial(40, 0.5): 10..=30 holds with probability > 0.998).
        assert!((10..=30).contains(&ids.len()), "{} cancelled", ids.len());
        for r in recs.iter().filter(|r| r["cancelled"] == true) {
            let after = r["cancel_ns"].as_u64().unwrap() - r["sent_ns"].as_u64().unwrap();
            assert!(after >= 50_000_000, "cancelled {after} ns after sending");
            assert_eq!(r["error"]["code"], 499);
        }
        for r in recs.iter().filter(|r| r["cancelled"] != true) {
            assert!(r.get("error").is_none());
        }
        chosen.push(ids);
    }
    // The choice depends on the seed and the request id only.
    assert_eq!(chosen[0], chosen[1]);
}

#[test]
fn a_concurrency_ceiling_holds_and_a_missed_schedule_is_reported() {
    // 500 requests/s with at most 2 in flight against a 50 ms server cannot be kept.
    let dir = tmpdir("ceiling");
    let o = run(&[
        "profile",
        "--request-rate",
        "500",
        "--concurrency",
        "2",
        "--request-count",
        "20",
        "--fail-on-missed-schedule",
        "--streaming",
        "--isl",
        "8",
        "--osl",
        "2",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "50",
        "--sim-itl-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did not keep its schedule"),
        "{}",
        stderr(&o)
    );
    let s = summary(&dir);
    assert_eq!(s["schedule_kept"]["avg"], 0.0);
    assert!(s["in_flight_requests"]["max"].as_f64().unwrap() <= 2.0);
    // The artifacts are complete all the same.
    assert!(dir.join(".aiperf_results_ready.json").exists());
}

#[test]
fn warmup_by_duration_runs_before_profiling() {
    let dir = tmpdir("warmup");
    let mut args = vec![
        "profile",
        "--concurrency",
        "2",
        "--request-count",
        "6",
        "--warmup-duration",
        "0.2",
        "--warmup-concurrency",
        "1",
        "--sim-ttft-ms",
        "10",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (phases, recs) = evidence(&dir);
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["phase"], "warmup");
    let warm: Vec<&Value> = recs.iter().filter(|r| r["phase"] == "warmup").collect();
    // One slot of ~10 ms requests for 0.2 s: more than a few, and all before profiling.
    assert!(warm.len() >= 5, "{} warmup requests", warm.len());
    let prof_start = phases[1]["start_ns"].as_u64().unwrap();
    assert!(
        warm.iter()
            .all(|r| r["end_ns"].as_u64().unwrap() <= prof_start)
    );
    assert!(
        warm.iter().all(|r| r["worker"] == 0),
        "warmup concurrency 1"
    );
    assert_eq!(recs.len() - warm.len(), 6);
    let s = summary(&dir);
    assert_eq!(s["request_count"]["avg"], 6.0);
}

#[test]
fn a_concurrency_ramp_opens_the_slots_one_by_one() {
    // 4 slots over 0.3 s: slot k opens when the limit 1 + ⌊3·t/0.3 s⌋ reaches k + 1,
    // at k × 100 ms.
    let dir = tmpdir("ramp");
    let mut args = vec![
        "profile",
        "--concurrency",
        "4",
        "--concurrency-ramp-duration",
        "0.3",
        "--request-count",
        "60",
        "--streaming",
        "--sim-ttft-ms",
        "20",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (phases, recs) = evidence(&dir);
    let start = phases[0]["start_ns"].as_u64().unwrap();
    for k in 0..4u64 {
        let first = recs
            .iter()
            .filter(|r| r["worker"] == k)
            .map(|r| r["planned_ns"].as_u64().unwrap() - start)
            .min()
            .unwrap_or_else(|| panic!("slot {k} never used"));
        assert!(
            first >= k * 100_000_000,
            "slot {k} first used at {first} ns"
        );
    }
    assert_eq!(recs.len(), 60);
}

#[test]
fn repeated_runs_write_each_run_and_a_confidence_aggregate() {
    let dir = tmpdir("repeat");
    let mut args = vec![
        "profile",
        "--concurrency",
        "2",
        "--request-count",
        "6",
        "--num-profile-runs",
        "3",
        "--warmup-request-count",
        "2",
        "--streaming",
        "--sim-ttft-ms",
        "2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut throughputs = Vec::new();
    for k in 1..=3 {
        let run_dir = dir.join(format!("profile_runs/run_{k:04}"));
        let (_, recs) = evidence(&run_dir);
        let warm = recs.iter().filter(|r| r["phase"] == "warmup").count();
        // Warmup only before the first run (AIPerf's default).
        assert_eq!(warm, if k == 1 { 2 } else { 0 }, "run {k}");
        let s = summary(&run_dir);
        throughputs.push(s["request_throughput"]["avg"].as_f64().unwrap());
        // The seed is pinned (42) when none is given, so every run sends the same bodies.
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(run_dir.join("inferbench_manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(m["random_seed"], 42);
    }
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("aggregate/profile_export_aiperf_aggregate.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(agg["metadata"]["num_profile_runs"], 3);
    assert_eq!(
        agg["metadata"]["run_labels"],
        serde_json::json!(["run_0001", "run_0002", "run_0003"])
    );
    let t = &agg["metrics"]["request_throughput_avg"];
    let mean = throughputs.iter().sum::<f64>() / 3.0;
    let std = (throughputs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert!((t["mean"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean);
    assert!((t["std"].as_f64().unwrap() - std).abs() <= 1e-9 * mean.max(1.0));
    // t(0.975, 2 df) = 4.302652729…
    assert!((t["t_critical"].as_f64().unwrap() - 4.302652729).abs() < 1e-6);
    assert!(
        dir.join("aggregate/profile_export_aiperf_aggregate.csv")
            .exists()
    );
}

#[test]
fn a_sweep_runs_every_cell_into_its_own_directory() {
    let dir = tmpdir("sweep");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1,3",
        "--request-count",
        "6",
        "--streaming",
        "--sim-ttft-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for c in [1, 3] {
        let cell = dir.join(format!("concurrency_{c}"));
        let m: Value = serde_json::from_str(
            &std::fs::read_to_string(cell.join("inferbench_manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(m["plan"]["load"]["concurrency"], c);
        assert_eq!(summary(&cell)["request_count"]["avg"], 6.0);
        assert!(
            dir.join(format!(
                "aggregate/concurrency_{c}/profile_export_aiperf_aggregate.json"
            ))
            .exists()
        );
    }
    let sw: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("sweep_aggregate/profile_export_aiperf_sweep.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(sw["metadata"]["sweep_parameters"][0]["name"], "concurrency");
    assert_eq!(
        sw["metadata"]["sweep_parameters"][0]["values"],
        serde_json::json!([1, 3])
    );
    let cells = sw["per_combination_metrics"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[1]["parameters"]["concurrency"], 3);
    // A cell of one run carries that run's values.
    let s3 = summary(&dir.join("concurrency_3"));
    assert_eq!(
        cells[1]["metrics"]["request_throughput"]["avg"],
        s3["request_throughput"]["avg"]
    );
    assert!(
        dir.join("sweep_aggregate/profile_export_aiperf_sweep.csv")
            .exists()
    );
}

/// Runs 12 streamed requests at concurrency 4 with `prefill` flags and checks that no two
/// requests ever waited for their first token at once, while decode overlapped.
fn one_request_waits_for_its_first_token_at_a_time(name: &str, prefill: &[&str]) {
    let dir = tmpdir(name);
    let mut args = vec!["profile", "--concurrency", "4"];
    args.extend(prefill);
    args.extend([
        "--request-count",
        "12",
        "--streaming",
        "--isl",
        "8",
        "--osl",
        "20",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "30",
        "--sim-itl-ms",
        "2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, recs) = evidence(&dir);
    // (start, first token) of every request: with one place, these never overlap.
    let mut waits: Vec<(u64, u64)> = recs
        .iter()
        .map(|r| {
            let first = r["events"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["content"].as_str().is_some_and(|c| !c.is_empty()))
                .unwrap()["t_ns"]
                .as_u64()
                .unwrap();
            (r["start_ns"].as_u64().unwrap(), first)
        })
        .collect();
    waits.sort();
    for w in waits.windows(2) {
        assert!(
            w[1].0 >= w[0].1,
            "two requests waited for their first token at once: {w:?}"
        );
    }
    // Decode overlaps: several requests are in flight at once.
    let s = summary(&dir);
    assert!(s["in_flight_requests"]["max"].as_f64().unwrap() >= 2.0);
}

#[test]
fn prefill_concurrency_keeps_one_request_waiting_for_its_first_token() {
    one_request_waits_for_its_first_token_at_a_time("prefill", &["--prefill-concurrency", "1"]);
}

#[test]
fn a_prefill_ramp_starts_the_cap_at_one() {
    // Cap 4 ramped over 600 s: limit 1 + ⌊3·t/600⌋ stays 1 for the first 200 s, far longer
    // than this run, so the ramp alone keeps one request waiting at a time.
    one_request_waits_for_its_first_token_at_a_time(
        "prefill-ramp",
        &[
            "--prefill-concurrency",
            "4",
            "--prefill-concurrency-ramp-duration",
            "600",
        ],
    );
}

#[test]
fn user_centric_users_plan_their_turns_and_wait_for_the_previous_one() {
    // 3 users at 30 requests/s together: user u plans at (u + 3k)/30 s, so together the plan
    // is every 1/30 s.
    let dir = tmpdir("users");
    let mut args = vec![
        "profile",
        "--user-centric-rate",
        "30",
        "--num-users",
        "3",
        "--request-count",
        "9",
        "--streaming",
        "--sim-ttft-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut offs = planned_offsets(&dir);
    offs.sort();
    let expect: Vec<u64> = (0..9u64)
        .map(|k| (k as f64 * 1e9 / 30.0).round() as u64)
        .collect();
    assert_eq!(offs, expect);

    // 2 users at 20/s (each user 100 ms apart) against a 250 ms server: a user's next
    // request waits for its previous one to end.
    let dir = tmpdir("users-slow");
    let o = run(&[
        "profile",
        "--user-centric-rate",
        "20",
        "--num-users",
        "2",
        "--request-count",
        "6",
        "--streaming",
        "--isl",
        "8",
        "--osl",
        "2",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "250",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, recs) = evidence(&dir);
    for w in [0u64, 1] {
        let mut mine: Vec<&Value> = recs.iter().filter(|r| r["worker"] == w).collect();
        mine.sort_by_key(|r| r["start_ns"].as_u64().unwrap());
        for p in mine.windows(2) {
            assert!(
                p[1]["start_ns"].as_u64() >= p[0]["end_ns"].as_u64(),
                "user {w} overlapped"
            );
        }
    }
    // The wait is schedule lag, so the verdict says the plan was not kept.
    assert_eq!(summary(&dir)["schedule_kept"]["avg"], 0.0);
}

/// The live run's manifest, evidence and per-record lines validate against the published
/// schemas, whatever load shape made them.
#[test]
fn live_artifacts_validate_against_the_schemas() {
    let schema = |name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schemas")
            .join(name);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let check = |v: &jsonschema::Validator, instance: &Value, what: &str| {
        let errors: Vec<String> = v.iter_errors(instance).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}");
    };
    let dir = tmpdir("schemas");
    let mut args = vec![
        "profile",
        "--request-rate",
        "100",
        "--concurrency",
        "4",
        "--request-count",
        "8",
        "--warmup-request-count",
        "2",
        "--request-cancellation-rate",
        "20",
        "--streaming",
        "--api-key",
        "sk-x",
        "--sim-ttft-ms",
        "1",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("inferbench_manifest.json")).unwrap(),
    )
    .unwrap();
    check(&schema("manifest.schema.json"), &manifest, "manifest");
    let ev = schema("evidence-line.schema.json");
    for (i, l) in std::fs::read_to_string(dir.join("inferbench_evidence.jsonl"))
        .unwrap()
        .lines()
        .enumerate()
    {
        check(
            &ev,
            &serde_json::from_str(l).unwrap(),
            &format!("evidence line {}", i + 1),
        );
    }
    let rec = schema("profile_export_record.schema.json");
    for l in std::fs::read_to_string(dir.join("profile_export.jsonl"))
        .unwrap()
        .lines()
    {
        check(
            &rec,
            &serde_json::from_str(l).unwrap(),
            "profile_export.jsonl line",
        );
    }
}

#[test]
fn a_rate_series_plans_its_steps_and_is_recorded_in_the_manifest() {
    let dir = tmpdir("series");
    let file = dir.with_extension("series.json");
    // One 0.1 s step at 100 req/s (a gap every 10 ms), then 200 req/s (5 ms).
    std::fs::write(
        &file,
        r#"[{"time_s": 0, "qps": 100}, {"time_s": 0.1, "qps": 200}]"#,
    )
    .unwrap();
    let mut args = vec![
        "profile",
        "--request-rate-series",
        file.to_str().unwrap(),
        "--arrival-pattern",
        "constant",
        "--request-count",
        "14",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let ms = |v: &[u64]| v.iter().map(|x| x * 1_000_000).collect::<Vec<_>>();
    assert_eq!(
        planned_offsets(&dir),
        ms(&[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 105, 110, 115])
    );
    let m = read_json(&dir.join("inferbench_manifest.json"));
    let rate = &m["plan"]["load"]["request_rate"];
    assert_eq!(rate["rate"], 100.0);
    assert_eq!(
        rate["series"][1],
        serde_json::json!({"time_s": 0.1, "qps": 200.0})
    );
    let schema: Value = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let _ = std::fs::remove_file(&file);
}
