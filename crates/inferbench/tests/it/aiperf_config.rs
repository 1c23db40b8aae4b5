//! AIPerf YAML configs: `config validate`, `config expand` and `profile --config` over
//! AIPerf 0.13's own templates (tests/data/aiperf-config/, copied unchanged with their
//! license headers), against the simulated server on 127.0.0.1:0.

use std::path::{Path, PathBuf};

use crate::common::*;

fn template(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/aiperf-config")
        .join(name)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every template, its cell count (from the file's own sweep, counted by hand) and the part
/// inferbench refuses (None: it runs). Jinja templates are refused before the schema.
const TEMPLATES: &[(&str, usize, Option<&str>)] = &[
    ("audio_multimodal.yaml", 1, None),
    (
        "embeddings.yaml",
        1,
        Some("benchmark.dataset.prompts.batchSize 10: not built"),
    ),
    (
        "env_var_production.yaml",
        1,
        Some("benchmark.dataset.prompts.isl.mean"),
    ),
    ("fixed_schedule.yaml", 1, None),
    ("goodput_slo.yaml", 1, None),
    (
        "gpu_telemetry.yaml",
        1,
        Some("benchmark.gpuTelemetry: not built"),
    ),
    (
        "http_trace_metrics.yaml",
        1,
        Some("benchmark.artifacts.trace true: not built"),
    ),
    (
        "inline_dataset.yaml",
        1,
        Some("benchmark.dataset.path: missing"),
    ),
    (
        "kv_cache_test.yaml",
        1,
        Some("benchmark.dataset.prefixPrompts: not built"),
    ),
    ("latency_test.yaml", 1, None),
    (
        "long_context.yaml",
        1,
        Some("benchmark.dataset.prompts.sequenceDistribution: not built"),
    ),
    ("minimal.yaml", 1, None),
    (
        "multi_turn_conversation.yaml",
        1,
        Some("benchmark.endpoint.connectionReuse \"sticky-user-sessions\": not built"),
    ),
    (
        "multi_url_load_balancing.yaml",
        1,
        Some("benchmark.endpoint.urls: 4 URLs"),
    ),
    ("multimodal_vision.yaml", 1, None),
    (
        "public_dataset.yaml",
        1,
        Some("benchmark.dataset.type \"public\": not built"),
    ),
    (
        "ramping.yaml",
        1,
        Some(
            "benchmark.phases[1].prefillRamp: 30 s without prefillConcurrency in the phase: refused",
        ),
    ),
    (
        "request_cancellation.yaml",
        1,
        Some("benchmark.phases[1].cancellation: not built"),
    ),
    // chatbot, rag_pipeline, summarization, production_mix, power_law.
    (
        "scenario_workload_profiles.yaml",
        5,
        Some("benchmark.dataset.prompts.isl.median 904: not built"),
    ),
    // 11 speed_bench_* formats.
    (
        "speed_bench_sweep.yaml",
        11,
        Some(
            "benchmark.datasets[0].path: \"datasets/speed-bench/qualitative.jsonl\": no such file",
        ),
    ),
    // 3 ISLs × 3 rates.
    ("sweep_distributions.yaml", 9, None),
    // 9 concurrencies.
    ("sweep_with_plot.yaml", 9, Some("plot: not built")),
    (
        "time_based_soak.yaml",
        1,
        Some("benchmark.serverMetrics: not built"),
    ),
    (
        "trace_replay.yaml",
        1,
        Some("benchmark.dataset.synthesis: not built"),
    ),
    ("warmup_profiling.yaml", 1, None),
];

const JINJA: &[(&str, &str)] = &[
    (
        "jinja2_variables.yaml",
        "benchmark.dataset.entries: \"{{ base_concurrency * dataset_multiplier }}\": Jinja template substitution is not built",
    ),
    (
        "user_files.yaml",
        "variables.total_concurrency: \"{{ concurrency_per_gpu * deployment_gpu_count }}\": Jinja template substitution is not built",
    ),
];

#[test]
fn every_template_is_listed_here() {
    let dir = template("");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = TEMPLATES
        .iter()
        .map(|t| t.0.to_string())
        .chain(JINJA.iter().map(|t| t.0.to_string()))
        .collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    // AIPerf ships 27 templates.
    assert_eq!(listed.len(), 27);
}

#[test]
fn every_template_validates_and_expands_or_is_refused_by_name() {
    for (name, cells, refused) in TEMPLATES {
        let p = template(name);
        let f = p.display().to_string();
        let o = run(&["config", "validate", &f]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(
            out.starts_with(&format!("{f}: valid against AIPerf 0.13's schema\n")),
            "{name}: {out}"
        );
        match refused {
            None => assert!(
                out.contains(&format!(
                    "{f}: inferbench runs it ({cells} cell{})",
                    if *cells == 1 { "" } else { "s" }
                )),
                "{name}: {out}"
            ),
            Some(part) => assert!(
                out.contains(&format!("{f}: inferbench refuses it: ")) && out.contains(part),
                "{name}: want {part}: {out}"
            ),
        }
        let o = run(&["config", "expand", &f, "--simulated"]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(
            out.starts_with(&format!(
                "{f}: {cells} cell{}\n",
                if *cells == 1 { "" } else { "s" }
            )),
            "{name}: {out}"
        );
        assert_eq!(
            out.lines().filter(|l| l.starts_with("cell ")).count(),
            *cells,
            "{name}: {out}"
        );
        // A refused template is refused by `profile` too, naming the same part (a few of
        // each kind of refusal: every process start costs the schema's compilation).
        const PROFILED: &[&str] = &[
            "latency_test.yaml",
            "multi_url_load_balancing.yaml",
            "public_dataset.yaml",
            "speed_bench_sweep.yaml",
        ];
        if let Some(part) = refused.filter(|_| PROFILED.contains(name)) {
            let mut args = vec!["profile", "-f", &f, "--simulated", "--request-count", "2"];
            let part = match *name {
                // One scenario per run; the first is the one refused above.
                "scenario_workload_profiles.yaml" => {
                    args.extend(["--scenario", "chatbot"]);
                    part
                }
                // `profile` reads the sweep first: its field has no comma-list flag.
                "speed_bench_sweep.yaml" => {
                    "sweep.parameters.datasets.main.format: not built in inferbench (a swept field needs a comma-list flag"
                }
                _ => part,
            };
            let o = run(&args);
            assert_eq!(o.status.code(), Some(2), "{name}");
            assert!(
                stderr(&o).contains(part),
                "{name}: want {part}: {}",
                stderr(&o)
            );
        }
    }
    for (name, part) in JINJA {
        let f = template(name).display().to_string();
        for args in [
            vec!["config", "validate", f.as_str()],
            vec!["config", "expand", f.as_str()],
            vec!["profile", "--config", f.as_str(), "--simulated"],
        ] {
            let o = run(&args);
            assert_eq!(o.status.code(), Some(2), "{name} {args:?}");
            let e = stderr(&o);
            assert!(e.contains(&format!("{f}: {part}")), "{name}: {e}");
            assert_eq!(e.lines().count(), 1, "{name}: one line: {e}");
        }
    }
}

/// Every one-cell template inferbench runs, run against the simulated server at a small
/// size (the sizes overridden on the command line, as AIPerf lets flags override a file): it
/// completes, its requests succeed, and its summary is written. The sweeps run in
/// `profile_config_runs_a_grid_sweep_of_the_file`.
#[test]
fn every_runnable_template_runs_small_against_the_simulated_server() {
    let runnable: Vec<&str> = TEMPLATES
        .iter()
        .filter(|(_, cells, refused)| *cells == 1 && refused.is_none())
        .map(|t| t.0)
        .collect();
    assert!(runnable.len() >= 5, "{runnable:?}");
    for name in runnable {
        let f = template(name).display().to_string();
        let dir = crate::common::tmpdir("template-run");
        let d = dir.display().to_string();
        // The media templates freeze 500 bodies of 20 s audio or 512×512 images: 4 will do.
        let entries = if name.contains("multimodal") { "4" } else { "" };
        let mut args = vec![
            "profile",
            "-f",
            &f,
            "--simulated",
            "--request-count",
            "4",
            "--isl",
            "16",
            "--osl",
            "4",
            "--benchmark-duration",
            "0.5",
            "--benchmark-grace-period",
            "5",
            "--warmup-request-count",
            "2",
            "--ui",
            "none",
            "--artifact-dir",
            &d,
        ];
        if !entries.is_empty() {
            args.extend(["--num-dataset-entries", entries]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let s = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
        let ok = s["request_count"]["avg"].as_f64().unwrap_or(0.0);
        assert!(ok >= 1.0, "{name}: {}", s["request_count"]);
        assert_eq!(
            s["error_request_count"]["avg"].as_f64().unwrap_or(0.0),
            0.0,
            "{name}"
        );
    }
}

#[test]
fn expand_lists_a_grid_first_parameter_outermost_with_each_cells_flags() {
    let f = template("sweep_distributions.yaml").display().to_string();
    let o = run(&["config", "expand", &f, "--simulated"]);
    let out = stdout(&o);
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("cell "))
        .map(|l| l.split_once(": ").unwrap().1)
        .collect();
    let mut want = Vec::new();
    for isl in [128, 512, 2048] {
        for rate in ["10.0", "30.0", "50.0"] {
            want.push(format!("datasets.default.prompts.isl={isl},rate={rate}"));
        }
    }
    assert_eq!(names, want);
    // Cell 2 is isl 128 at rate 30: its flags carry exactly those values, no URL.
    let flags = out.lines().nth(4).unwrap();
    assert!(
        flags.contains(" --isl 128 ") && flags.contains(" --request-rate 30 "),
        "{flags}"
    );
    assert!(!flags.contains("--url"), "{flags}");
}

#[test]
fn profile_config_runs_the_file_with_command_line_flags_overriding_it() {
    let dir = tmpdir("aiperf-config-minimal");
    let art = dir.join("a");
    let f = template("minimal.yaml").display().to_string();
    // The file says 100 requests at concurrency 8, ISL 512, OSL 128.
    let o = run(&[
        "profile",
        "-f",
        &f,
        "--simulated",
        "--request-count",
        "6",
        "--concurrency",
        "2",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs: Vec<_> = evidence_records(&art)
        .into_iter()
        .filter(|r| r["phase"] == "profiling")
        .collect();
    assert_eq!(recs.len(), 6);
    let m = read_json(&art.join("inferbench_manifest.json"));
    let text = m.to_string();
    // The file's model and OSL are kept; the command line's count and concurrency win.
    assert!(text.contains("meta-llama/Llama-3.1-8B-Instruct"), "{text}");
    let inputs = read_json(&art.join("inputs.json")).to_string();
    assert!(inputs.contains("\"max_completion_tokens\":128"), "{inputs}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn profile_config_runs_a_grid_sweep_of_the_file() {
    let dir = tmpdir("aiperf-config-sweep");
    let art = dir.join("s");
    let f = template("sweep_distributions.yaml").display().to_string();
    // The rate list is overridden by one rate: the ISL list (128, 512, 2048) is the sweep.
    let o = run(&[
        "profile",
        "-f",
        &f,
        "--simulated",
        "--request-rate",
        "50",
        "--benchmark-duration",
        "0.3",
        "--benchmark-grace-period",
        "5",
        "--num-profile-runs",
        "1",
        "--warmup-request-count",
        "1",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for isl in [128, 512, 2048] {
        assert!(art.join(format!("isl_{isl}")).is_dir(), "isl_{isl}");
    }
    assert!(!art.join("isl_550").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_flag_errors_name_the_flag() {
    let o = run(&["profile", "--simulated"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--config"), "{}", stderr(&o));
    let o = run(&["profile", "-f", "/nonexistent/x.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/x.yaml: cannot read"),
        "{}",
        stderr(&o)
    );
    let o = run(&["profile", "--tokenizer-trust-remote-code"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("runs no code"), "{}", stderr(&o));
}

#[test]
fn record_processors_is_accepted_with_a_note() {
    let dir = tmpdir("aiperf-record-processors");
    let o = run(&[
        "profile",
        "--record-processors",
        "4",
        "--request-count",
        "2",
        "--artifact-dir",
        dir.join("a").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: --record-processor-service-count 4: no effect: inferbench folds every record in its one process"
        ),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_type_zip_pairs_the_lists() {
    let dir = tmpdir("aiperf-zip");
    let art = dir.join("z");
    let o = run(&[
        "profile",
        "--concurrency",
        "1,2",
        "--isl",
        "16,32",
        "--sweep-type",
        "zip",
        "--request-count",
        "2",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // zip: (1, 16) and (2, 32); a grid would add (1, 32) and (2, 16).
    assert!(art.join("concurrency_1_isl_16").is_dir());
    assert!(art.join("concurrency_2_isl_32").is_dir());
    assert!(!art.join("concurrency_1_isl_32").exists());
    assert!(!art.join("concurrency_2_isl_16").exists());
    let o = run(&[
        "profile",
        "--concurrency",
        "1,2,3",
        "--isl",
        "16,32",
        "--sweep-type",
        "zip",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--sweep-type zip: the swept lists have different lengths (--concurrency 3, --isl 2)"
        ),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
