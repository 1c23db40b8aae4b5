//! `inferbench plan run|check` end to end on the built-in simulated server: a plan with the
//! three profiles runs, writes a directory per profile, records every run in the ledger and
//! reports per profile; `check` runs nothing; bad plans are one-line errors naming the plan
//! file, the line and the field (exit 2), with the ledger unchanged and nothing written.

use crate::common;

use std::path::{Path, PathBuf};

use common::{read_json, run, stderr, tmpdir};
use serde_json::Value;

/// Flags every profile shares: a fast simulated server, no progress display.
const DEFAULTS: &str = r#"args = ["--sim-ttft-ms", "1", "--sim-itl-ms", "0", "--ui", "none"]"#;

const REGRESSION: &str = r#"[[profile]]
name = "regression"
kind = "regression"
args = ["--concurrency", "2", "--request-count", "12", "--isl", "16", "--osl", "4",
        "--extra-inputs", "ignore_eos:true", "--extra-inputs", "min_tokens:4",
        "--random-seed", "5"]
repeats = 2
declare = ["note.purpose=ci"]
"#;

const SERVICE_LOAD: &str = r#"[[profile]]
name = "service-load"
kind = "service-load"
args = ["--request-rate", "200", "--arrival-pattern", "gamma", "--arrival-smoothness", "2",
        "--request-count", "12", "--isl", "16", "--osl", "4", "--random-seed", "5"]
"#;

const TRACE_REPLAY: &str = r#"[[profile]]
name = "trace-replay"
kind = "trace-replay"
args = ["--fixed-schedule", "--fixed-schedule-auto-offset", "--input-file", "trace.jsonl",
        "--custom-dataset-type", "mooncake_trace"]
"#;

/// Six requests 20 ms apart.
const TRACE: &str = r#"{"timestamp": 1000, "input_length": 8, "output_length": 2}
{"timestamp": 1020, "input_length": 9, "output_length": 2}
{"timestamp": 1040, "input_length": 10, "output_length": 2}
{"timestamp": 1060, "input_length": 8, "output_length": 3}
{"timestamp": 1080, "input_length": 9, "output_length": 3}
{"timestamp": 1100, "input_length": 10, "output_length": 3}
"#;

fn header() -> String {
    format!(
        "[plan]\nname = \"ci-matrix\"\nledger = \"ledger\"\noutput = \"out\"\n\n[defaults]\n{DEFAULTS}\n\n"
    )
}

/// A directory with the plan (`plan.toml`) and the trace beside it.
fn plan_dir(name: &str, body: &str) -> (PathBuf, PathBuf) {
    let d = tmpdir(name);
    std::fs::write(d.join("trace.jsonl"), TRACE).unwrap();
    let p = d.join("plan.toml");
    std::fs::write(&p, format!("{}{body}", header())).unwrap();
    (d, p)
}

fn plan(args: &[&str]) -> std::process::Output {
    let mut a = vec!["plan"];
    a.extend_from_slice(args);
    run(&a)
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in the plan"))
        + 1
}

fn ledger_entries(l: &Path) -> Vec<Value> {
    std::fs::read_to_string(l.join("ledger.jsonl"))
        .unwrap()
        .lines()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect()
}

#[test]
fn a_plan_with_the_three_profiles_runs_records_and_reports_each() {
    let (d, p) = plan_dir(
        "all-three",
        &format!("{REGRESSION}\n{SERVICE_LOAD}\n{TRACE_REPLAY}"),
    );
    let o = plan(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = d.join("out");
    // A directory per profile: the regression's two repeats under profile_runs/.
    for r in ["run_0001", "run_0002"] {
        assert!(
            out.join("regression/profile_runs")
                .join(r)
                .join("inferbench_evidence.jsonl")
                .exists()
        );
    }
    for name in ["service-load", "trace-replay"] {
        assert!(out.join(name).join("inferbench_evidence.jsonl").exists());
    }
    // The ledger: its init line, then one run.record per run, in plan order.
    let entries = ledger_entries(&d.join("ledger"));
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ledger.init",
            "run.record",
            "run.record",
            "run.record",
            "run.record"
        ]
    );
    let pins: Vec<&str> = entries[1..]
        .iter()
        .map(|e| e["body"]["profile"].as_str().unwrap())
        .collect();
    assert_eq!(
        pins,
        ["regression", "regression", "service-load", "trace-replay"]
    );
    // `ledger log` shows the same four records.
    let log = run(&[
        "ledger",
        "--ledger",
        d.join("ledger").to_str().unwrap(),
        "log",
    ]);
    assert!(log.status.success(), "{}", stderr(&log));
    let log = String::from_utf8(log.stdout).unwrap();
    assert_eq!(log.matches("run.record").count(), 4, "{log}");

    // plan_result.json: valid against its schema, one entry per profile, each run's cid the
    // ledger's.
    let result = read_json(&out.join("plan_result.json"));
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/schemas/plan-result.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&result).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(result["exit_code"], 0);
    let profiles = result["profiles"].as_array().unwrap();
    let names: Vec<&str> = profiles
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["regression", "service-load", "trace-replay"]);
    let cids: Vec<&str> = profiles
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .map(|r| r["cid"].as_str().unwrap())
        .collect();
    let ledger_cids: Vec<&str> = entries[1..]
        .iter()
        .map(|e| e["cid"].as_str().unwrap())
        .collect();
    assert_eq!(cids, ledger_cids);
    for p in profiles {
        assert_eq!(p["kind"], p["name"], "{p}");
        assert!(p["gate"].is_null());
        for r in p["runs"].as_array().unwrap() {
            assert_eq!(r["profile"], p["kind"]);
        }
    }
    assert_eq!(profiles[0]["runs"].as_array().unwrap().len(), 2);
    // The regression's declaration reached the ledger entry.
    assert_eq!(
        entries[1]["body"]["declared"],
        serde_json::json!(["note.purpose"])
    );
    // The console: a row per profile.
    let stdout = String::from_utf8(o.stdout).unwrap();
    for row in [
        "| regression   | regression   | 2/2",
        "| service-load | service-load | 1/1",
        "| trace-replay | trace-replay | 1/1",
    ] {
        assert!(stdout.contains(row), "{row}: {stdout}");
    }
}

#[test]
fn plan_check_accepts_the_plan_and_writes_nothing() {
    let (d, p) = plan_dir(
        "check",
        &format!("{REGRESSION}\n{SERVICE_LOAD}\n{TRACE_REPLAY}"),
    );
    let o = plan(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("3 profiles checked; nothing was run"),
        "{stdout}"
    );
    assert!(!d.join("out").exists());
    assert!(!d.join("ledger").exists());
}

/// A ledger made beforehand, its bytes, and the plan's error: exit 2, one line naming
/// `plan.toml:LINE: FIELD`; afterwards the ledger has the same bytes and no output exists.
fn refused(name: &str, body: &str, line_needle: &str, want: &[&str]) {
    let (d, p) = plan_dir(name, body);
    let l = d.join("ledger");
    let init = run(&["ledger", "--ledger", l.to_str().unwrap(), "init"]);
    assert!(init.status.success(), "{}", stderr(&init));
    let before = std::fs::read(l.join("ledger.jsonl")).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let line = line_of(&text, line_needle);
    for cmd in ["check", "run"] {
        let o = plan(&[cmd, p.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{cmd}: one line: {e}");
        let at = format!("{}:{line}: ", p.display());
        assert!(e.contains(&at), "{cmd}: want {at}: {e}");
        for w in want {
            assert!(e.contains(w), "{cmd}: want {w}: {e}");
        }
        assert_eq!(std::fs::read(l.join("ledger.jsonl")).unwrap(), before);
        assert!(!d.join("out").exists(), "{cmd}: nothing is run");
    }
}

#[test]
fn an_unknown_kind_is_refused_naming_the_field() {
    let body = format!(
        "{REGRESSION}\n{}",
        SERVICE_LOAD.replace("kind = \"service-load\"", "kind = \"soak\"")
    );
    refused(
        "bad-kind",
        &body,
        "kind = \"soak\"",
        &["profile[2].kind: unknown kind \"soak\""],
    );
}

#[test]
fn a_missing_trace_file_is_refused_naming_the_line_and_field() {
    // The first two profiles are fine: nothing runs before the third is found wrong.
    let body = format!(
        "{REGRESSION}\n{SERVICE_LOAD}\n{}",
        TRACE_REPLAY.replace("\"trace.jsonl\"", "\"missing.jsonl\"")
    );
    refused(
        "missing-trace",
        &body,
        "missing.jsonl",
        &["profile[3].args: --input-file missing.jsonl: no such file"],
    );
}

#[test]
fn a_regression_without_ignore_eos_is_refused() {
    let body = REGRESSION.replace("\"--extra-inputs\", \"ignore_eos:true\", ", "");
    refused(
        "no-ignore-eos",
        &body,
        "args = [\"--concurrency\"",
        &[
            "profile[1].args: kind = \"regression\"",
            "ignore_eos:true is required",
        ],
    );
    let body = REGRESSION.replace("\"--extra-inputs\", \"min_tokens:4\",", "");
    refused(
        "no-min-tokens",
        &body,
        "args = [\"--concurrency\"",
        &[
            "profile[1].args: kind = \"regression\"",
            "min_tokens:4 is required",
        ],
    );
}

#[test]
fn a_profile_whose_flags_say_another_kind_is_refused() {
    let body = SERVICE_LOAD.replace("kind = \"service-load\"", "kind = \"trace-replay\"");
    refused(
        "kind-mismatch",
        &body,
        "args = [\"--request-rate\"",
        &["kind = \"trace-replay\": the flags make a service-load (--request-rate)"],
    );
}

#[test]
fn variants_in_a_profile_are_refused_as_a_sweep() {
    let body = SERVICE_LOAD.replace(
        "\"--random-seed\", \"5\"]",
        "\"--random-seed\", \"5\", \"--variant\", \"isl=8\", \"--variant\", \"isl=16\"]",
    );
    refused(
        "plan-variant",
        &body,
        "args = [\"--request-rate\"",
        &["profile[1].args: --variant makes a sweep: a plan profile is one workload"],
    );
}

#[test]
fn an_unknown_field_is_refused_naming_it() {
    let body = REGRESSION.replace("repeats = 2", "repeat = 2");
    refused(
        "unknown-field",
        &body,
        "repeat = 2",
        &["unknown field `repeat`"],
    );
}

#[test]
fn a_flag_the_plan_sets_itself_is_refused_in_args() {
    let body = SERVICE_LOAD.replace(
        "\"--random-seed\", \"5\"]",
        "\"--random-seed\", \"5\",\n        \"--artifact-dir\", \"x\"]",
    );
    refused(
        "plan-flag",
        &body,
        "\"--artifact-dir\"",
        &["profile[1].args: --artifact-dir: set by the plan's output directory"],
    );
}

#[test]
fn an_aiperf_config_part_not_built_is_refused_by_name() {
    // A valid AIPerf config whose grid sweep is not one workload.
    // (The schema is checked first, as AIPerf does, so the file must be valid: a dataset.)
    let yaml = "schemaVersion: \"2.0\"\nsweep:\n  type: grid\n  parameters:\n    rate: [1.0, 2.0]\nbenchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 10\n    prompts:\n      isl: 16\n      osl: 4\n  phases:\n    type: poisson\n    rate: 1.0\n    requests: 10\n";
    let body = "[[profile]]\nname = \"svc\"\nkind = \"service-load\"\naiperf_config = \"svc.yaml\"\nsimulated = true\n";
    let (d, p) = plan_dir("yaml-grid", body);
    std::fs::write(d.join("svc.yaml"), yaml).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let line = line_of(&text, "aiperf_config");
    let o = plan(&["run", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!(
            "{}:{line}: profile[1].aiperf_config: {}: sweep.type \"grid\": not built in inferbench plans",
            p.display(),
            d.join("svc.yaml").display()
        )),
        "{e}"
    );
    assert!(!d.join("out").exists() && !d.join("ledger").exists());
}

#[test]
fn an_aiperf_config_profile_runs_on_the_simulated_server() {
    let yaml = "schemaVersion: \"2.0\"\nbenchmark:\n  model: mock-model\n  endpoint:\n    url: http://localhost:8000\n    streaming: true\n  dataset:\n    type: synthetic\n    entries: 32\n    prompts:\n      isl: 16\n      osl: 4\n  profiling:\n    type: poisson\n    rate: 200.0\n    requests: 10\n";
    let body = "[[profile]]\nname = \"svc\"\nkind = \"service-load\"\naiperf_config = \"svc.yaml\"\nsimulated = true\n";
    let (d, p) = plan_dir("yaml-run", body);
    std::fs::write(d.join("svc.yaml"), yaml).unwrap();
    let o = plan(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result = read_json(&d.join("out/plan_result.json"));
    let prof = &result["profiles"][0];
    assert_eq!(prof["runs"][0]["profile"], "service-load");
    let cmd = prof["command"].as_str().unwrap();
    // The YAML's load, and no --url: the built-in server.
    assert!(
        cmd.contains("--request-rate 200 --arrival-pattern poisson --request-count 10"),
        "{cmd}"
    );
    assert!(!cmd.contains("--url"), "{cmd}");
    let records = common::evidence_records(&d.join("out/svc"));
    assert_eq!(records.len(), 10);
}

#[test]
fn a_profile_with_a_gate_reaches_the_gate_spec_parser_before_anything_runs() {
    // The spec parser is the gate's own (inferbench_run::gate::parse_file): whatever it
    // says of this file, the plan names the profile's gate field and runs nothing.
    let body = format!("{REGRESSION}gate = \"gate.toml\"\n");
    let (d, p) = plan_dir("gated", &body);
    std::fs::write(d.join("gate.toml"), "this is = not [a gate spec\n").unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let line = line_of(&text, "gate = ");
    let o = plan(&["run", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("{}:{line}: profile[1].gate: ", p.display()))
            && e.contains("gate.toml"),
        "{e}"
    );
    assert!(!d.join("out").exists() && !d.join("ledger").exists());
    // A gate file that does not exist is refused the same way.
    std::fs::remove_file(d.join("gate.toml")).unwrap();
    let o = plan(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&format!("{}:{line}: profile[1].gate: ", p.display())));
}

#[test]
fn a_profile_directory_already_holding_files_is_refused() {
    let (d, p) = plan_dir("busy", SERVICE_LOAD);
    std::fs::create_dir_all(d.join("out/service-load")).unwrap();
    std::fs::write(d.join("out/service-load/old.txt"), "x").unwrap();
    let o = plan(&["run", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("profile[1].name: ") && e.contains("already holds files"),
        "{e}"
    );
    assert!(!d.join("ledger").exists());
}

#[test]
fn a_regression_with_varying_lengths_and_a_service_load_without_its_shape_are_refused() {
    let body = REGRESSION.replace(
        "\"--isl\", \"16\",",
        "\"--isl\", \"16\", \"--isl-stddev\", \"2\",",
    );
    refused(
        "isl-stddev",
        &body,
        "args = [\"--concurrency\"",
        &["--synthetic-input-tokens-stddev 2: a regression's lengths are fixed (0)"],
    );
    let body = SERVICE_LOAD.replace("\"--arrival-smoothness\", \"2\",", "");
    refused(
        "gamma-no-smoothness",
        &body,
        "args = [\"--request-rate\"",
        &["--arrival-pattern gamma: give its --arrival-smoothness"],
    );
    let body = SERVICE_LOAD.replace(
        "\"--arrival-pattern\", \"gamma\", \"--arrival-smoothness\", \"2\",",
        "\"--arrival-pattern\", \"constant\",",
    );
    refused(
        "constant",
        &body,
        "args = [\"--request-rate\"",
        &["--arrival-pattern constant: a service load is arrival-driven"],
    );
}

#[test]
fn a_ledger_directory_that_is_not_a_ledger_is_refused_before_anything_runs() {
    let (d, p) = plan_dir("not-a-ledger", SERVICE_LOAD);
    std::fs::create_dir_all(d.join("ledger")).unwrap();
    std::fs::write(d.join("ledger/notes.txt"), "x").unwrap();
    let o = plan(&["run", p.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    // `ledger = "ledger"` is line 3 of the plan.
    assert!(
        e.contains(&format!("{}:3: plan.ledger: ", p.display())) && e.contains("not a ledger"),
        "{e}"
    );
    assert!(!d.join("out").exists());
}

#[test]
fn the_example_plan_runs_on_the_simulated_server() {
    // examples/plan.toml writes to ../artifacts/ beside its directory: run a copy, so that
    // stays inside a temporary directory.
    let root = tmpdir("example");
    let ex = root.join("examples");
    std::fs::create_dir_all(&ex).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for f in [
        "plan.toml",
        "plan-service-load.yaml",
        "plan-trace.jsonl",
        "plan-gate-regression.toml",
        "plan-gate-service-load.toml",
        "plan-gate-trace-replay.toml",
    ] {
        std::fs::copy(src.join(f), ex.join(f)).unwrap();
    }
    let p = ex.join("plan.toml");
    let o = plan(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = plan(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result = read_json(&root.join("artifacts/plan-demo/plan_result.json"));
    let kinds: Vec<&str> = result["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["regression", "service-load", "trace-replay"]);
    // The regression repeats twice: four runs in all.
    let entries = ledger_entries(&root.join("artifacts/plan-demo-ledger"));
    assert_eq!(
        entries.iter().filter(|e| e["kind"] == "run.record").count(),
        4
    );
    // Each profile is gated by its own spec, and each verdict is its own ledger entry.
    for p in result["profiles"].as_array().unwrap() {
        assert_eq!(p["gate"]["verdict"], "PASS", "{p}");
        assert_eq!(p["exit_code"], 0, "{p}");
    }
    let verdicts: Vec<&Value> = entries
        .iter()
        .filter(|e| e["kind"] == "gate.verdict")
        .collect();
    assert_eq!(verdicts.len(), 3);
    let names: Vec<&str> = verdicts
        .iter()
        .map(|e| e["body"]["gate"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["demo-regression", "demo-service-load", "demo-trace-replay"]
    );
    // The regression gate judged both repeats.
    assert_eq!(
        verdicts[0]["body"]["runs"]["candidate"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // 24 rows in the trace: 24 requests replayed.
    let trace = common::evidence_records(&root.join("artifacts/plan-demo/trace-replay"));
    assert_eq!(trace.len(), 24);
}
