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
/// inferbench refuses (None: it runs).
const TEMPLATES: &[(&str, usize, Option<&str>)] = &[
    ("audio_multimodal.yaml", 1, None),
    ("embeddings.yaml", 1, None),
    // Log-normal peaks (mean and median): --isl-dist/--osl-dist.
    ("env_var_production.yaml", 1, None),
    ("fixed_schedule.yaml", 1, None),
    ("goodput_slo.yaml", 1, None),
    ("gpu_telemetry.yaml", 1, None),
    ("http_trace_metrics.yaml", 1, None),
    ("inline_dataset.yaml", 1, None),
    ("jinja2_variables.yaml", 1, None),
    // A user-centric warmup: --warmup-user-centric-rate, --warmup-num-users.
    ("kv_cache_test.yaml", 1, None),
    ("latency_test.yaml", 1, None),
    ("long_context.yaml", 1, None),
    ("minimal.yaml", 1, None),
    // Phases stopped by sessions: --num-warmup-sessions, --num-profiling-sessions.
    ("multi_turn_conversation.yaml", 1, None),
    ("multi_url_load_balancing.yaml", 1, None),
    ("multimodal_vision.yaml", 1, None),
    ("public_dataset.yaml", 1, None),
    // prefillRamp without prefillConcurrency runs, with a note that it does nothing.
    ("ramping.yaml", 1, None),
    ("request_cancellation.yaml", 1, None),
    // chatbot, rag_pipeline, summarization, production_mix, power_law: all run, one cell
    // each (profile_config_runs_every_scenario_of_the_file).
    ("scenario_workload_profiles.yaml", 5, None),
    // 11 speed_bench_* formats (a small file of ours at the template's relative path).
    // The cells run as --variants (a format has no comma-list flag).
    ("speed_bench_sweep.yaml", 11, None),
    // 3 ISLs × 3 rates.
    ("sweep_distributions.yaml", 9, None),
    // 9 concurrencies; its plot specifications are drawn.
    ("sweep_with_plot.yaml", 9, None),
    ("time_based_soak.yaml", 1, None),
    ("trace_replay.yaml", 1, None),
    ("user_files.yaml", 1, None),
    ("warmup_profiling.yaml", 1, None),
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
    let mut listed: Vec<String> = TEMPLATES.iter().map(|t| t.0.to_string()).collect();
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
            "kv_cache_test.yaml",
            "scenario_workload_profiles.yaml",
            "speed_bench_sweep.yaml",
            "trace_replay.yaml",
        ];
        if let Some(part) = refused.filter(|_| PROFILED.contains(name)) {
            let mut args = vec!["profile", "-f", &f, "--simulated", "--request-count", "2"];
            let part = match *name {
                // One scenario per run; the second is the first refused (chatbot runs).
                "scenario_workload_profiles.yaml" => {
                    args.extend(["--scenario", "rag_pipeline"]);
                    part
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
}

/// The small-size flags every template run gets (AIPerf lets flags override a file).
fn small(f: &str, dir: &str) -> Vec<String> {
    [
        "profile",
        "-f",
        f,
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
        "--num-profile-runs",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        dir,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs `args` and checks that requests succeeded and the summary was written.
fn runs_ok(name: &str, args: &[String], dir: &Path) {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&a);
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

/// Every one-cell template inferbench runs (a text endpoint: chat, or embeddings), run
/// against the simulated server at a small size: it completes, its requests succeed, and
/// its summary is written. The public dataset is given its local file, and the scenario
/// file its one runnable scenario. The sweeps run in `profile_config_runs_a_grid_sweep_of_the_file`.
#[test]
fn every_runnable_template_runs_small_against_the_simulated_server() {
    let runnable: Vec<&str> = TEMPLATES
        .iter()
        .filter(|(_, cells, refused)| *cells == 1 && refused.is_none())
        .map(|t| t.0)
        .collect();
    assert_eq!(runnable.len(), 23, "{runnable:?}");
    let sharegpt = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/datasets/sharegpt.json")
        .display()
        .to_string();
    for name in runnable {
        let f = template(name).display().to_string();
        let dir = crate::common::tmpdir("template-run");
        let mut args = small(&f, &dir.display().to_string());
        // The media templates freeze 500 bodies of 20 s audio or 512×512 images: 4 will do.
        if name.contains("multimodal") {
            args.extend(["--num-dataset-entries".into(), "4".into()]);
        }
        if name == "public_dataset.yaml" {
            args.extend(["--public-dataset-path".into(), sharegpt.clone()]);
        }
        runs_ok(name, &args, &dir);
        if name == "trace_replay.yaml" {
            // Its server-metrics formats include parquet: left out, with a note.
            let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(
                stderr(&o).contains("benchmark.serverMetrics.formats: parquet: not written"),
                "{}",
                stderr(&o)
            );
        }
        if name == "ramping.yaml" {
            // The ramp that has no cap to open is run and named in a note.
            let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(
                stderr(&o).contains("inferbench: note: ")
                    && stderr(&o).contains("benchmark.phases[1].prefillRamp: 30 s without prefillConcurrency in the phase has no effect"),
                "{}",
                stderr(&o)
            );
        }
        if name == "multi_turn_conversation.yaml" {
            let j = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
            let p = &j["input_config"]["phases"][1];
            assert_eq!(p["sessions"], 100, "{j}");
        }
        if name == "kv_cache_test.yaml" {
            let j = crate::common::read_json(&dir.join("profile_export_aiperf.json"));
            let w = &j["input_config"]["phases"][0];
            assert_eq!(
                (&w["type"], &w["users"], &w["rate"]),
                (&"user_centric".into(), &10.into(), &1.0.into()),
                "{j}"
            );
        }
        if name == "user_files.yaml" {
            // total_concurrency = 32 × 4 = 128 (a number); job_name is the run directory's
            // name, model the file's.
            let j = crate::common::read_json(&dir.join("input_config.json"));
            assert_eq!(j["total_concurrency"], 128, "{j}");
            assert_eq!(j["model"], "meta-llama/Llama-3.1-8B-Instruct", "{j}");
            assert_eq!(
                j["run"]["job_name"].as_str(),
                dir.file_name().and_then(|s| s.to_str()),
                "{j}"
            );
            let y = std::fs::read_to_string(dir.join("meta/run.yaml")).unwrap();
            assert!(
                y.contains("tags:\n- dense-agg\n- isl=1024\n- osl=1024\n"),
                "{y}"
            );
            let t = std::fs::read_to_string(dir.join("README.md")).unwrap();
            assert!(t.contains("- Concurrency: 128 (32/GPU x 4 GPUs)\n"), "{t}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let f = template("scenario_workload_profiles.yaml")
        .display()
        .to_string();
    let dir = crate::common::tmpdir("template-run");
    let mut args = small(&f, &dir.display().to_string());
    args.extend(["--scenario".into(), "production_mix".into()]);
    runs_ok("production_mix", &args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// scenario_workload_profiles.yaml without --scenario runs every scenario, one cell each
/// (AIPerf runs the whole sweep), each with its own rate, concurrency and lengths over the
/// base's: rag_pipeline's log-normal ISL (mean 1024, median 904) as --isl-dist.
#[test]
fn profile_config_runs_every_scenario_of_the_file() {
    let f = template("scenario_workload_profiles.yaml")
        .display()
        .to_string();
    let dir = tmpdir("template-scenarios");
    let art = dir.join("s");
    let mut args = small(&f, &art.display().to_string());
    // The scenarios set their lengths: the small run's --isl/--osl would override them all.
    let at = args.iter().position(|a| a == "--isl").unwrap();
    args.drain(at..at + 4);
    args.extend(["--num-dataset-entries", "8", "--sim-itl-ms", "0"].map(String::from));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // (scenario, profiling rate, concurrency) from the file, by hand.
    for (name, rate, conc) in [
        ("chatbot", 50.0, 128),
        ("rag_pipeline", 20.0, 64),
        ("summarization", 5.0, 16),
        ("production_mix", 30.0, 64),
        ("power_law", 25.0, 64),
    ] {
        let m = crate::common::read_json(&art.join(name).join("inferbench_manifest.json"));
        let l = &m["plan"]["load"];
        assert_eq!(l["request_rate"]["rate"], rate, "{name}: {l}");
        assert_eq!(l["concurrency"], conc, "{name}: {l}");
    }
    let m = crate::common::read_json(&art.join("rag_pipeline/inferbench_manifest.json"));
    assert_eq!(
        m["plan"]["dataset"]["isl_dist"],
        r#"{"mean":1024,"median":904}"#
    );
    let s = crate::common::read_json(&art.join("rag_pipeline/profile_export_aiperf.json"));
    assert_eq!(
        s["input_config"]["datasets"][0]["prompts"]["isl"],
        serde_json::json!({"mean": 1024, "median": 904})
    );
    assert!(art.join("sweep_aggregate").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}

/// inline_dataset.yaml's five records are the dataset: the run sends their texts, in order
/// (sequential sampling), the second with its own output length. Their file is written in
/// the cache directory, not in `/tmp`.
#[test]
fn inline_records_are_the_dataset() {
    let f = template("inline_dataset.yaml").display().to_string();
    let dir = crate::common::tmpdir("inline-run");
    let d = dir.join("out").display().to_string();
    let cache = dir.join("cache");
    let o = crate::common::bin()
        .env("XDG_CACHE_HOME", &cache)
        .args([
            "profile",
            "-f",
            &f,
            "--simulated",
            "--request-count",
            "5",
            "--concurrency",
            "1",
            "--ui",
            "none",
            "--artifact-dir",
            &d,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written: Vec<String> = std::fs::read_dir(cache.join("inferbench/inline"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(
        written[0].starts_with("inferbench-inline-") && written[0].ends_with(".jsonl"),
        "{written:?}"
    );
    let dir = dir.join("out");
    let inputs = std::fs::read_to_string(dir.join("inputs.json")).unwrap();
    let at = |s: &str| inputs.find(s).unwrap_or_else(|| panic!("{s}: {inputs}"));
    assert!(at("What is machine learning?") < at("Explain GANs in two sentences."));
    assert!(at("Explain GANs in two sentences.") < at("Define reinforcement learning."));
    assert!(
        inputs.contains("\"max_completion_tokens\": 200"),
        "{inputs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// jinja2_variables.yaml, computed by hand: entries 16 × 10 = 160, ISL 512 ± 512 // 10 = 51,
/// OSL 128 ± 128 // 5 = 25, warmup 16 × 5 = 80 requests at 16 // 2 = 8, rate 30, duration
/// 120, concurrency 16 × 4 = 64, rate ramp 120 // 4 = 30.
#[test]
fn jinja_values_become_the_flags() {
    let f = template("jinja2_variables.yaml").display().to_string();
    let o = run(&["config", "expand", &f, "--simulated"]);
    let out = stdout(&o);
    for want in [
        " --num-dataset-entries 160 ",
        " --isl 512 --isl-stddev 51 ",
        " --osl 128 --osl-stddev 25 ",
        " --request-rate 30 ",
        " --benchmark-duration 120 ",
        " --concurrency 64 ",
        " --request-rate-ramp-duration 30 ",
        " --warmup-request-count 80 --warmup-concurrency 8",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    // An undefined name is refused naming the file and the field, on one line.
    let dir = crate::common::tmpdir("jinja-bad");
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "schemaVersion: \"2.0\"\nbenchmark:\n  endpoint: {url: http://h:1}\n  phases: {type: concurrency, concurrency: \"{{ nope }}\"}\n",
    )
    .unwrap();
    let b = bad.display().to_string();
    let o = run(&["config", "validate", &b]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "{b}: benchmark.phases.concurrency: \"{{{{ nope }}}}\": Jinja: "
        )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `config init`: the listing, search and category filter, and every template written,
/// validated and run small against the simulated server.
#[test]
fn config_init_templates_list_search_and_run() {
    let o = run(&["config", "init", "--list"]);
    assert_eq!(o.status.code(), Some(0));
    let list = stdout(&o);
    let names = [
        "first_run",
        "warmup_then_rate",
        "slo_goodput",
        "timed_soak",
        "chat_sessions",
        "inline_prompts",
        "rate_grid",
        "derived_sizes",
    ];
    let mut last = 0;
    for n in names {
        let i = list
            .find(&format!("  {n} "))
            .unwrap_or_else(|| panic!("{n}: {list}"));
        assert!(i > last, "{n} out of order: {list}");
        last = i;
    }
    assert!(list.starts_with("Getting Started\n"), "{list}");
    let o = run(&["config", "init", "--search", "sweep"]);
    let found = stdout(&o);
    assert!(
        found.contains("  rate_grid ") && !found.contains("  first_run "),
        "{found}"
    );
    let o = run(&["config", "init", "--list", "--category", "datasets"]);
    let cat = stdout(&o);
    assert!(
        cat.contains("  chat_sessions ") && cat.contains("  inline_prompts "),
        "{cat}"
    );
    assert!(!cat.contains("  first_run "), "{cat}");
    let o = run(&["config", "init", "--template", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("available templates: chat_sessions, derived_sizes"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "config",
        "init",
        "--template",
        "first_run",
        "--model",
        "org/x",
    ]);
    assert!(stdout(&o).contains("\n  model: org/x\n"), "{}", stdout(&o));

    let dir = crate::common::tmpdir("init-run");
    for n in names {
        let f = dir.join(format!("{n}.yaml"));
        let fs = f.display().to_string();
        let o = run(&["config", "init", "--template", n, "--output", &fs]);
        assert_eq!(o.status.code(), Some(0), "{n}: {}", stderr(&o));
        let o = run(&["config", "validate", &fs]);
        let out = stdout(&o);
        assert!(
            out.contains(&format!("{fs}: inferbench runs it (")),
            "{n}: {out}"
        );
        let art = dir.join(format!("{n}-run"));
        let mut args = small(&fs, &art.display().to_string());
        // One rate: the grid's list is overridden (its three cells run in the sweep test).
        args.extend(["--request-rate".into(), "50".into()]);
        if n != "rate_grid" && n != "warmup_then_rate" {
            args.truncate(args.len() - 2);
        }
        runs_ok(n, &args, &art);
    }
    let _ = std::fs::remove_dir_all(&dir);
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

/// speed_bench_sweep.yaml sweeps the dataset's format, which has no comma-list flag: its 11
/// cells run as --variants, each reading its own category of the file.
#[test]
fn profile_config_runs_a_sweep_of_a_field_without_a_list_flag_as_variants() {
    let dir = tmpdir("aiperf-config-variants");
    let art = dir.join("s");
    let f = template("speed_bench_sweep.yaml").display().to_string();
    let o = run(&[
        "profile",
        "-f",
        &f,
        "--simulated",
        "--request-count",
        "2",
        "--allow-dataset-wrap",
        // The file asks for 4096 output tokens a request: 4 keep the sweep short.
        "--extra-inputs",
        "max_completion_tokens:4",
        "--sim-itl-ms",
        "0",
        "--num-profile-runs",
        "1",
        "--warmup-request-count",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Each category with the start of its one row in the file.
    let cats = [
        ("coding", "Write a function that reverses"),
        ("humanities", "Why did the printing press"),
        ("math", "What is 12 times 13"),
        ("multilingual", "Say thank you in three"),
        ("qa", "What is the capital of Peru"),
        ("rag", "Given the note"),
        ("reasoning", "If all cats are animals"),
        ("roleplay", "You are a tour guide"),
        ("stem", "Why is the sky blue"),
        ("summarization", "Summarize: the meeting"),
        ("writing", "Write two lines about rain"),
    ];
    for (c, text) in cats {
        let cell = art.join(format!("format_speed_bench_{c}"));
        // Each cell sent its category's row and no other.
        let inputs = std::fs::read_to_string(cell.join("inputs.json")).unwrap_or_default();
        assert!(inputs.contains(text), "{c}: {inputs}");
        for (other, t) in cats {
            assert!(other == c || !inputs.contains(t), "{c} sent {other}'s row");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// sweep_with_plot.yaml's `plot:` block: its multi-run charts over the sweep's cells in
/// ROOT/plots, its single-run charts in each cell's plots/ (a timeslice chart needs the
/// slices: --slice-duration), and a note for its `settings`, which inferbench does not use.
#[test]
fn profile_config_draws_the_files_plot_specifications() {
    let dir = tmpdir("aiperf-config-plot");
    let art = dir.join("s");
    let f = template("sweep_with_plot.yaml").display().to_string();
    let o = run(&[
        "profile",
        "-f",
        &f,
        "--simulated",
        "--concurrency",
        "1,2",
        "--request-count",
        "6",
        "--isl",
        "16",
        "--osl",
        "4",
        "--slice-duration",
        "0.02",
        "--num-profile-runs",
        "1",
        "--warmup-request-count",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("plot.settings: not used"), "{e}");
    for stem in ["pareto_throughput_vs_latency", "ttft_vs_throughput"] {
        for ext in ["svg", "png"] {
            let p = art.join("plots").join(format!("{stem}.{ext}"));
            assert!(p.is_file(), "{}: {e}", p.display());
        }
    }
    // The two telemetry-only defaults are not in multi_run_defaults: not drawn.
    assert!(
        !art.join("plots/latency_throughput_uncertainty.svg")
            .exists()
    );
    let svg = std::fs::read_to_string(art.join("plots/pareto_throughput_vs_latency.svg")).unwrap();
    assert!(
        svg.contains("Pareto: Output Token Throughput vs Latency"),
        "{svg}"
    );
    // The group is the model of each run.
    assert!(svg.contains("meta-llama/Llama-3.1-8B-Instruct"), "{svg}");
    for cell in ["concurrency_1", "concurrency_2"] {
        for stem in ["ttft_over_time", "timeslices_ttft"] {
            let p = art.join(cell).join("plots").join(format!("{stem}.svg"));
            assert!(p.is_file(), "{}: {e}", p.display());
        }
    }
    // A plot type that is not built: `config validate` names it, and `profile` stops before
    // any request with the same line.
    let text = std::fs::read_to_string(template("sweep_with_plot.yaml")).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, text.replace("type: scatter_line", "type: histogram")).unwrap();
    let b = bad.display().to_string();
    let want =
        "plot.visualization.multi_run_plots.ttft_vs_throughput.type \"histogram\": not built";
    let o = run(&["config", "validate", &b]);
    assert!(stdout(&o).contains(want), "{}", stdout(&o));
    let o = run(&[
        "profile",
        "-f",
        &b,
        "--simulated",
        "--artifact-dir",
        art.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
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
