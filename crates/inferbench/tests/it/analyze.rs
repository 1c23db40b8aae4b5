//! `inferbench analyze swim-lane` and `analyze turn-messages` on an inferbench run (the
//! agentic DAG dataset against the built-in simulated server), on a cut AIPerf 0.13 run
//! (`tests/data/aiperf-analyze`), and on bad input.

use std::path::{Path, PathBuf};

use crate::common;

use common::{copy_tree, run, stderr, tmpdir};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The cut AIPerf run, copied so outputs land in a scratch directory.
fn aiperf_run(name: &str) -> PathBuf {
    let d = tmpdir(name);
    copy_tree(&data("aiperf-analyze"), &d);
    d
}

/// The DAG file of `tests/data/datasets/agentic_dag.jsonl`: roots `root` and `solo`, and four
/// subagent sessions (`research`, `review`, `side`, `tail`): 9 requests.
fn agentic_run(name: &str) -> PathBuf {
    let d = tmpdir(name);
    let o = run(&[
        "profile",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "2",
        "--sim-itl-ms",
        "1",
        "--input-file",
        s(&data("datasets/agentic_dag.jsonl")),
        "--dataset-sampling-strategy",
        "sequential",
        "--concurrency",
        "1",
        "--export-level",
        "raw",
        "--artifact-dir",
        s(&d),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    d
}

#[test]
fn an_inferbench_agentic_run_draws_lanes_and_messages() {
    let d = agentic_run("analyze-agentic");
    let o = run(&["analyze", "swim-lane", s(&d), "--html", "-c", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let png = d.join("swim_lane.png");
    let page = d.join("swim_lane.html");
    assert_eq!(
        stdout(&o),
        format!("saved {}\nsaved {}\n", png.display(), page.display())
    );
    assert!(
        std::fs::read(&png)
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n")
    );
    let h = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        h.matches("<g class=\"req\">").count(),
        9,
        "one bar a request"
    );
    assert!(h.contains("2 sessions + 4 subagents"), "{h}");
    assert!(h.contains("Target concurrency (1)"));
    // Self-contained: no script, nothing loaded from elsewhere.
    assert!(!h.contains("<script") && !h.contains(" src=") && !h.contains("href="));

    let o = run(&["analyze", "turn-messages", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("turn_messages.html");
    let line = stdout(&o);
    assert!(
        line.starts_with(&format!("saved {} (", out.display())) && line.ends_with(" KB)\n"),
        "{line}"
    );
    let h = std::fs::read_to_string(&out).unwrap();
    // Roots first (root before solo, by start), then the subagents.
    let at = |id: &str| {
        h.find(&format!("<summary title=\"{id}\">"))
            .unwrap_or_else(|| panic!("{id} missing"))
    };
    assert!(at("root") < at("solo") && at("solo") < at("research"));
    for id in ["review", "side", "tail"] {
        assert!(at("solo") < at(id));
    }
    assert!(h.contains("You plan.") && h.contains("Plan the work."));
    assert!(
        h.contains("6 conversations (6 shown)"),
        "conversation count"
    );
}

#[test]
fn an_aiperf_run_draws_with_its_marks_and_explicit_outputs() {
    let d = aiperf_run("analyze-aiperf");
    let out = tmpdir("analyze-aiperf-out").join("sub/lanes.png");
    let o = run(&[
        "analyze",
        "swim-lane",
        s(&d),
        "-o",
        s(&out),
        "--html",
        "--ramp",
        "0.3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = out.with_extension("html");
    assert_eq!(
        stdout(&o),
        format!("saved {}\nsaved {}\n", out.display(), page.display())
    );
    assert!(std::fs::read(&out).unwrap().starts_with(b"\x89PNG"));
    let h = std::fs::read_to_string(&page).unwrap();
    // Three waves of four single-turn sessions, each wave starting after the last ended.
    assert!(h.contains("12 sessions across 4 slots"), "{h}");
    assert_eq!(h.matches("<g class=\"req\">").count(), 12);
    assert!(h.contains("request fc2ae266-cceb-4cff-b0ff-befabd39de76"));
    // benchmark_duration avg 1.526 s; the ramp from --ramp.
    assert!(h.contains("Benchmark end (1.5s)") && h.contains("Ramp done (0.3s)"));

    let o = run(&["analyze", "turn-messages", s(&d), "-n", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = std::fs::read_to_string(d.join("turn_messages.html")).unwrap();
    assert!(h.contains("8 conversations (3 shown)"), "{h}");
    assert!(h.contains("title=\"session_000000\""));
    assert!(!h.contains("title=\"session_000004\""), "cut by -n 3");
}

#[test]
fn a_run_that_cannot_be_drawn_is_skipped_and_the_others_drawn() {
    let good = aiperf_run("analyze-skip-good");
    let missing = good.join("no-such-run");
    let o = run(&["analyze", "swim-lane", s(&missing), s(&good)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim(),
        format!(
            "skip {}: {} not found",
            missing.display(),
            missing.join("profile_export.jsonl").display()
        )
    );
    assert!(good.join("swim_lane.png").is_file());

    let bad = tmpdir("analyze-bad-json");
    let f = bad.join("profile_export.jsonl");
    let first = std::fs::read_to_string(data("aiperf-analyze/profile_export.jsonl")).unwrap();
    let first = first.lines().next().unwrap();
    std::fs::write(&f, format!("{first}\n{{\"metadata\": \n")).unwrap();
    let o = run(&["analyze", "swim-lane", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!("skip {}: {}:2: ", bad.display(), f.display())),
        "{e}"
    );
    assert!(!e.contains("panic") && !e.contains("internal error"));

    let raw = bad.join("profile_export_raw.jsonl");
    std::fs::write(&raw, "{}\n\nnot json\n").unwrap();
    let o = run(&["analyze", "turn-messages", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("{}:3: ", raw.display())),
        "{}",
        stderr(&o)
    );

    let empty = tmpdir("analyze-no-raw");
    let o = run(&["analyze", "turn-messages", s(&empty)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no raw records under"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn out_with_two_runs_is_a_usage_error() {
    let a = aiperf_run("analyze-two-a");
    let b = aiperf_run("analyze-two-b");
    for cmd in ["swim-lane", "turn-messages"] {
        let o = run(&["analyze", cmd, s(&a), s(&b), "-o", s(&a.join("x.out"))]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(
            stderr(&o).contains("--out only valid with a single run dir"),
            "{}",
            stderr(&o)
        );
        assert!(!a.join("x.out").exists());
    }
}

#[test]
fn message_text_cannot_break_out_of_the_page() {
    let d = tmpdir("analyze-escape");
    let line = serde_json::json!({
        "metadata": {"conversation_id": "c</script><b>", "turn_index": 0,
                     "x_correlation_id": "x", "request_start_ns": 1},
        "payload": {"model": "m", "messages": [
            {"role": "user", "content": "</script><b>bold?</b><script>alert(1)</script>"}
        ]}
    });
    std::fs::write(d.join("profile_export_raw.jsonl"), format!("{line}\n")).unwrap();
    let o = run(&["analyze", "turn-messages", s(&d), "--content-cap", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = std::fs::read_to_string(d.join("turn_messages.html")).unwrap();
    assert!(!h.contains("</script><b>") && !h.contains("<script>alert"));
    assert!(
        h.contains("<pre>&lt;/script&gt;&lt;b&gt;bold?&lt;/b</pre>"),
        "{h}"
    );
    // 46 characters capped at 20: 26 more.
    assert!(h.contains("26 more characters"), "{h}");
}

#[test]
fn an_inferbench_run_with_a_ramp_gets_its_ramp_line_from_its_own_summary() {
    // The profiling phase's ramp (0.2 s), not the warmup's (0.1 s): the warmup phase is
    // marked excluded from results, as AIPerf marks it.
    let d = tmpdir("analyze-ramp");
    let o = run(&[
        "profile",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "1",
        "--request-count",
        "8",
        "--concurrency",
        "2",
        "--concurrency-ramp-duration",
        "0.2",
        "--warmup-request-count",
        "2",
        "--warmup-concurrency-ramp-duration",
        "0.1",
        "--artifact-dir",
        s(&d),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["analyze", "swim-lane", s(&d), "--html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = std::fs::read_to_string(d.join("swim_lane.html")).unwrap();
    assert!(h.contains("Ramp done (0.2s)"), "{h}");
}
