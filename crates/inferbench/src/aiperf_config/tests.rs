//! The mapping against AIPerf 0.13's own templates (copied unchanged into
//! `tests/data/aiperf-config/`) and a few configs written for these tests (`ours/`). Expected
//! flags are written by hand from each file.

use std::path::{Path, PathBuf};

use super::{Options, profile_flags};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/aiperf-config")
        .join(name)
}

fn flags(name: &str, opts: &Options) -> Result<Vec<String>, String> {
    profile_flags(&data(name), opts)
}

fn ok(name: &str, opts: &Options) -> Vec<String> {
    flags(name, opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The error, checked to be one line naming the file.
fn refused(name: &str, opts: &Options) -> String {
    let e = flags(name, opts).expect_err(name);
    assert!(!e.contains('\n'), "{e}");
    assert!(e.starts_with(&data(name).display().to_string()), "{e}");
    e
}

#[test]
fn aiperf_config_every_template_maps_or_is_refused_by_name_never_schema_invalid() {
    // AIPerf's own templates are valid AIPerf input: the embedded schema (with duration
    // strings read as seconds) must accept each one that is not refused before validation.
    let dir = data("");
    let mut n = 0;
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        n += 1;
        if let Err(e) = profile_flags(&p, &Options::default())
            && (e.contains("schema") || e.contains("not YAML"))
        {
            bad.push(e);
        }
    }
    assert_eq!(n, 27, "AIPerf 0.13 ships 27 templates");
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn aiperf_config_an_invalid_file_is_refused_by_the_schema() {
    // concurrency 0 is below the schema's minimum of 1.
    let text = "schemaVersion: \"2.0\"\nbenchmark:\n  endpoint:\n    url: http://h:1\n  phases:\n    type: concurrency\n    concurrency: 0\n";
    let e = super::flags_from_str(
        "x.yaml",
        text,
        std::path::Path::new(""),
        &Options::default(),
    )
    .unwrap_err();
    assert!(
        e.starts_with("x.yaml: benchmark.phases") && e.contains("AIPerf 0.13's schema"),
        "{e}"
    );
}

#[test]
fn aiperf_config_minimal_template_maps_to_flags() {
    assert_eq!(
        ok("minimal.yaml", &Options::default()),
        s(&[
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--url",
            "http://localhost:8000",
            // AIPerf's YAML default: not streaming.
            "--no-streaming",
            // AIPerf's YAML default for a synthetic dataset.
            "--dataset-sampling-strategy",
            "sequential",
            "--num-dataset-entries",
            "100",
            "--isl",
            "512",
            "--osl",
            "128",
            "--concurrency",
            "8",
            "--request-count",
            "100",
        ])
    );
}

#[test]
fn aiperf_config_a_scenario_is_merged_over_the_base_benchmark() {
    let opts = Options {
        scenario: Some("chatbot".into()),
        simulated: false,
        cli: false,
    };
    assert_eq!(
        ok("ours/scenarios.yaml", &opts),
        s(&[
            "--random-seed",
            "42",
            "--model",
            "my-model",
            "--url",
            "http://localhost:8000",
            "--endpoint-type",
            "chat",
            "--custom-endpoint",
            "/v1/chat/completions",
            "--streaming",
            "--dataset-sampling-strategy",
            "sequential",
            "--num-dataset-entries",
            "1000",
            // The scenario's lengths over the base's 512/50 and 128/25.
            "--isl",
            "128",
            "--isl-stddev",
            "20",
            "--osl",
            "64",
            "--osl-stddev",
            "10",
            // The profiling phase: the scenario's rate and concurrency, the base's type,
            // duration and grace period.
            "--request-rate",
            "50",
            "--arrival-pattern",
            "poisson",
            "--concurrency",
            "128",
            "--benchmark-duration",
            "180",
            "--benchmark-grace-period",
            "60",
            "--warmup-request-count",
            "50",
            "--warmup-concurrency",
            "8",
        ])
    );
}

#[test]
fn aiperf_config_scenario_selection_errors_name_the_part() {
    let e = refused("ours/scenarios.yaml", &Options::default());
    assert!(
        e.contains("sweep.type \"scenarios\": select one") && e.contains("chatbot, summarization"),
        "{e}"
    );
    let nope = Options {
        scenario: Some("nope".into()),
        simulated: false,
        cli: false,
    };
    let e = refused("ours/scenarios.yaml", &nope);
    assert!(e.contains("sweep.runs: no scenario \"nope\""), "{e}");
    // summarization's ISL has a median over the base's stddev: the log-normal replaces the
    // base's normal whole (AIPerf's discriminated merge), and goes out as --isl-dist.
    let summ = Options {
        scenario: Some("summarization".into()),
        simulated: false,
        cli: false,
    };
    let f = ok("ours/scenarios.yaml", &summ);
    let at = f
        .iter()
        .position(|x| x == "--isl-dist")
        .expect("--isl-dist");
    assert_eq!(f[at + 1], r#"{"mean":4096,"median":3421}"#, "{f:?}");
    // The OSL (a normal) goes with it as --osl-dist, each axis drawn on its own.
    let at = f
        .iter()
        .position(|x| x == "--osl-dist")
        .expect("--osl-dist");
    assert!(f[at + 1].contains(r#""mean":"#), "{f:?}");
    assert!(!f.iter().any(|x| x == "--isl"), "{f:?}");
    let e = refused(
        "minimal.yaml",
        &Options {
            scenario: Some("x".into()),
            simulated: false,
            cli: false,
        },
    );
    assert!(e.contains("sweep: scenario \"x\" selected"), "{e}");
}

#[test]
fn aiperf_config_a_fixed_schedule_trace_maps_with_auto_offset_on() {
    let trace = data("ours/trace.jsonl").display().to_string();
    let want = |url: bool| {
        let mut v = s(&["--model", "my-model"]);
        if url {
            v.extend(s(&["--url", "http://localhost:8000"]));
        }
        v.extend(s(&[
            "--no-streaming",
            "--dataset-sampling-strategy",
            "sequential",
            "--input-file",
            &trace,
            "--custom-dataset-type",
            "mooncake_trace",
            "--fixed-schedule",
            // autoOffset defaults to true in AIPerf's YAML.
            "--fixed-schedule-auto-offset",
            "--concurrency",
            "16",
        ]));
        v
    };
    assert_eq!(ok("ours/fixed_trace.yaml", &Options::default()), want(true));
    let sim = Options {
        scenario: None,
        simulated: true,
        cli: false,
    };
    assert_eq!(ok("ours/fixed_trace.yaml", &sim), want(false));
}

#[test]
fn aiperf_config_a_regression_maps_its_extra_inputs_and_warmup() {
    assert_eq!(
        ok("ours/regression.yaml", &Options::default()),
        s(&[
            "--random-seed",
            "7",
            "--model",
            "mock-model",
            "--url",
            "http://localhost:8000",
            "--request-timeout-seconds",
            "30",
            "--streaming",
            "--extra-inputs",
            r#"{"ignore_eos":true,"min_tokens":8}"#,
            "--dataset-sampling-strategy",
            "sequential",
            "--num-dataset-entries",
            "64",
            "--isl",
            "32",
            "--osl",
            "8",
            "--osl-stddev",
            "0",
            "--concurrency",
            "4",
            "--request-count",
            "24",
            "--warmup-request-count",
            "4",
            "--warmup-concurrency",
            "2",
        ])
    );
}

#[test]
fn aiperf_config_a_missing_trace_file_names_the_field() {
    let e = refused("ours/missing_trace.yaml", &Options::default());
    assert!(
        e.contains("benchmark.dataset.path: \"no_such_trace.jsonl\": no such file"),
        "{e}"
    );
}

#[test]
fn aiperf_config_templates_with_parts_not_built_are_refused_by_name() {
    for (name, want) in [
        (
            "sweep_distributions.yaml",
            "sweep.type \"grid\": not built in inferbench plans",
        ),
        (
            // Several URLs map to repeated --url since issue 14.
            "multi_url_load_balancing.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
        (
            "scenario_workload_profiles.yaml",
            // `${MODEL_NAME:…}` is substituted (its default) since issue 14: what is left is
            // the choice of one scenario.
            "sweep.type \"scenarios\": select one with --scenario NAME (a plan: scenario = \"NAME\")",
        ),
        (
            // `slos` map to --goodput since issue 14; artifacts stay refused in plans.
            "goodput_slo.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
        (
            "warmup_profiling.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
        (
            "time_based_soak.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
        (
            "latency_test.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
        (
            "fixed_schedule.yaml",
            "benchmark.artifacts: not built in inferbench plans",
        ),
    ] {
        let e = refused(name, &Options::default());
        assert!(e.contains(want), "{name}: want {want}: {e}");
    }
}

#[test]
fn aiperf_config_durations_read_as_aiperf_writes_them() {
    assert_eq!(super::part::duration("30"), Some(30.0));
    assert_eq!(super::part::duration("30s"), Some(30.0));
    assert_eq!(super::part::duration("1.5 min"), Some(90.0));
    assert_eq!(super::part::duration("2h"), Some(7200.0));
    assert_eq!(super::part::duration("inf"), None);
}

#[test]
fn aiperf_config_environment_substitution_takes_the_value_then_the_default() {
    let env = |k: &str| (k == "SET").then(|| "from-env".to_string());
    assert_eq!(
        super::subst::env("f", "a: ${SET:d}\nb: ${UNSET:600.0}\nc: x${SET}y\n", &env).unwrap(),
        "a: from-env\nb: 600.0\nc: xfrom-envy\n"
    );
    assert_eq!(
        super::subst::env("f", "a: 1\nb: ${NOPE}\n", &env).unwrap_err(),
        "f:2: ${NOPE}: the environment variable is not set and has no default"
    );
    assert!(
        super::subst::env("f", "a: ${BAD NAME}\n", &env)
            .unwrap_err()
            .starts_with("f:1: \"${BAD NAME}\": not an environment variable name")
    );
}

#[test]
fn aiperf_config_a_cli_grid_sweep_becomes_comma_lists_replacing_the_base() {
    let yaml = "schemaVersion: \"2.0\"\nsweep:\n  type: zip\n  parameters:\n    rate: [1.0, 2.0]\n    dataset.prompts.isl: [16, 32]\nbenchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    prompts:\n      isl: {mean: 100, stddev: 10}\n      osl: 4\n  phases:\n    type: poisson\n    rate: 9.0\n    requests: 10\n";
    let opts = Options {
        scenario: None,
        simulated: true,
        cli: true,
    };
    let f = super::flags_from_str("x.yaml", yaml, Path::new(""), &opts).unwrap();
    // The base's --request-rate 9 and --isl 100 --isl-stddev 10 are gone; the lists follow.
    assert_eq!(
        f,
        s(&[
            "--model",
            "m",
            "--no-streaming",
            "--dataset-sampling-strategy",
            "sequential",
            "--osl",
            "4",
            "--arrival-pattern",
            "poisson",
            "--request-count",
            "10",
            // AIPerf orders the parameters by path: dataset… before rate.
            "--isl",
            "16,32",
            "--request-rate",
            "1.0,2.0",
            "--sweep-type",
            "zip",
        ])
    );
    // Every magic-list field sweeps: the phase's requests, the prompts' isl stddev.
    let more = yaml
        .replace("rate: [1.0, 2.0]", "requests: [20, 40]")
        .replace(
            "dataset.prompts.isl: [16, 32]",
            "dataset.prompts.isl.stddev: [0, 5]",
        );
    let f = super::flags_from_str("x.yaml", &more, Path::new(""), &opts).unwrap();
    let tail: Vec<&str> = f.iter().rev().take(6).rev().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "--isl-stddev",
            "0,5",
            "--request-count",
            "20,40",
            "--sweep-type",
            "zip"
        ]
    );
    assert!(!f.contains(&"10".to_string()), "{f:?}");
    assert!(
        f.contains(&"100".to_string()),
        "the base's isl mean stays: {f:?}"
    );
    // A field with no comma-list flag: each cell is a --variant, named by the swept fields'
    // last parts (sorted by path, as the cells are), setting every flag a cell changes; the
    // plain ISL drops the base's stddev, so the cells give its default, 0.
    let vars = yaml.replace("rate: [1.0, 2.0]", "gracePeriod: [1, 2]");
    let f = super::flags_from_str("x.yaml", &vars, Path::new(""), &opts).unwrap();
    let tail: Vec<&str> = f.iter().rev().take(4).rev().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "--variant",
            "isl_16_gracePeriod_1: benchmark-grace-period=1, isl=16, isl-stddev=0",
            "--variant",
            "isl_32_gracePeriod_2: benchmark-grace-period=2, isl=32, isl-stddev=0",
        ]
    );
    assert!(!f.iter().any(|x| x == "--sweep-type"), "{f:?}");
    // In a plan the sweep is refused.
    let e = super::flags_from_str("x.yaml", yaml, Path::new(""), &Options::default()).unwrap_err();
    assert!(
        e.contains("sweep.type \"zip\": not built in inferbench plans"),
        "{e}"
    );
}

#[test]
fn aiperf_config_cli_maps_multirun_artifacts_and_slos() {
    let yaml = "schemaVersion: \"2.0\"\nmultiRun:\n  numRuns: 3\n  cooldownSeconds: 2.5\n  setConsistentSeed: true\nbenchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 8\n    prompts:\n      isl: 16\n      osl: 4\n  phases:\n    type: concurrency\n    concurrency: 2\n    requests: 4\n  slos:\n    time_to_first_token: 500\n    request_latency: 5000\n  artifacts:\n    dir: ./out\n    summary: [json]\n    records: [jsonl]\n";
    let opts = Options {
        scenario: None,
        simulated: true,
        cli: true,
    };
    let f = super::flags_from_str("x.yaml", yaml, Path::new(""), &opts).unwrap();
    let has = |w: &[&str]| f.windows(w.len()).any(|x| x == s(w).as_slice());
    assert!(
        has(&[
            "--num-profile-runs",
            "3",
            "--profile-run-cooldown-seconds",
            "2.5"
        ]),
        "{f:?}"
    );
    assert!(has(&["--artifact-dir", "./out"]), "{f:?}");
    assert!(
        has(&["--goodput", "time_to_first_token:500 request_latency:5000"]),
        "{f:?}"
    );
    // A plan has its own repeats: multiRun stays refused there.
    let e = super::flags_from_str("x.yaml", yaml, Path::new(""), &Options::default()).unwrap_err();
    assert_eq!(e, "x.yaml: multiRun: not built in inferbench plans");
    // The seed policy and convergence stopping map to their flags; a convergence minimum
    // other than AIPerf's default (2) has none.
    let conv = yaml.replace(
        "setConsistentSeed: true",
        "setConsistentSeed: false\n  varySeedPerTrial: true\n  convergence: {metric: time_to_first_token, stat: p90, mode: cv, threshold: 0.1}",
    );
    let f = super::flags_from_str("x.yaml", &conv, Path::new(""), &opts).unwrap();
    let has = |w: &[&str]| f.windows(w.len()).any(|x| x == s(w).as_slice());
    assert!(
        has(&["--set-consistent-seed", "false", "--vary-seed-per-trial"]),
        "{f:?}"
    );
    assert!(
        has(&[
            "--convergence-metric",
            "time_to_first_token",
            "--convergence-stat",
            "p90",
            "--convergence-mode",
            "cv",
            "--convergence-threshold",
            "0.1"
        ]),
        "{f:?}"
    );
    let e = super::flags_from_str(
        "x.yaml",
        &conv.replace("threshold: 0.1}", "threshold: 0.1, minRuns: 3}"),
        Path::new(""),
        &opts,
    )
    .unwrap_err();
    assert!(
        e.starts_with("x.yaml: multiRun.convergence.minRuns 3: not built in inferbench (inferbench checks convergence from the second run on"),
        "{e}"
    );
}

#[test]
fn aiperf_config_rate_series_and_prefill_ramps_map_to_their_flags() {
    let f = ok("ours/rate_series.yaml", &Options::default());
    let has = |pair: &[&str]| f.windows(2).any(|w| w == s(pair).as_slice());
    assert!(has(&["--request-rate-series", "series.json"]), "{f:?}");
    assert!(!f.iter().any(|x| x == "--request-rate"), "{f:?}");
    assert!(
        has(&["--prefill-concurrency-ramp-duration", "1.5"]),
        "{f:?}"
    );
    assert!(
        has(&["--warmup-prefill-concurrency-ramp-duration", "2"]),
        "{f:?}"
    );
}

#[test]
fn a_grid_is_every_combination_first_list_outermost_and_stops_past_its_cap() {
    use super::sweep::grid;
    assert_eq!(
        grid(&[2, 3], 6),
        Some(vec![
            vec![0, 0],
            vec![0, 1],
            vec![0, 2],
            vec![1, 0],
            vec![1, 1],
            vec![1, 2]
        ])
    );
    assert_eq!(grid(&[2, 3], 5), None);
    assert_eq!(grid(&[], 1), Some(vec![vec![]]));
}
