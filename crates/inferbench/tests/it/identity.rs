//! Integration tests of the run's identity and of `grade`: the real binary against the
//! built-in simulated server (127.0.0.1, port 0), and an imported GenAI-Perf fixture. The
//! expected pins follow from the flags; the expected downgrades from the reference's §5.2.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common;

use common::*;

fn sim_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--concurrency",
        "2",
        "--request-count",
        "6",
        "--isl",
        "16",
        "--osl",
        "8",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "7",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "2",
        "--sim-itl-ms",
        "1",
        "--output-artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn identity(dir: &Path) -> Value {
    read_json(&dir.join("inferbench_manifest.json"))["identity"].clone()
}

fn value(id: &Value, pin: &str) -> Value {
    id["pins"][pin]["value"].clone()
}

fn flags(id: &Value) -> Vec<String> {
    id["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect()
}

/// `grade DIR --json FILE`, checked to exit 0; the grade document.
fn grade(dir: &Path, extra: &[&str]) -> (Value, String) {
    let out = dir.join("grade.json");
    let mut args = vec![
        "grade",
        dir.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    (
        read_json(&out),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// (field, tier) of each downgrade of a metric.
fn downgrades(g: &Value, metric: &str) -> BTreeSet<(String, String)> {
    let m = g["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric)
        .unwrap_or_else(|| panic!("{metric} not graded"));
    m["downgrades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert!(!d["reason"].as_str().unwrap().is_empty(), "{d}");
            (
                d["field"].as_str().unwrap().to_string(),
                d["tier"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn tier(g: &Value, metric: &str) -> String {
    g["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric)
        .unwrap()["tier"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_simulated_run_records_its_measured_pins_and_a_declared_tag_is_movable() {
    let dir = tmpdir("identity-sim");
    let o = sim_run(
        &dir,
        &[
            "--declare",
            "image=repo:tag",
            "--declare",
            "note.ticket=OPS-7",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let m = read_json(&dir.join("inferbench_manifest.json"));
    let id = &m["identity"];
    // From the flags, by hand.
    assert_eq!(value(id, "ignore_eos"), json!(true));
    assert_eq!(value(id, "random_seed"), json!(7));
    assert_eq!(value(id, "request_count"), json!(6));
    assert_eq!(value(id, "max_tokens"), json!({"max_completion_tokens": 8}));
    assert_eq!(value(id, "min_tokens"), json!("absent"));
    assert_eq!(value(id, "stop"), json!("absent"));
    assert_eq!(value(id, "sampling"), json!("absent"));
    assert_eq!(value(id, "streaming"), json!(true));
    assert_eq!(
        value(id, "request_order"),
        json!({"strategy": "shuffle", "seed": 7})
    );
    assert_eq!(value(id, "arrival_policy")["mode"], json!("concurrency"));
    assert_eq!(value(id, "arrival_policy")["concurrency"], json!(2));
    assert_eq!(
        value(id, "length_spec")["isl"],
        json!({"mean": 16.0, "stddev": 0.0})
    );
    assert_eq!(value(id, "warmup"), json!("none"));
    assert_eq!(value(id, "stop_rule"), json!("request count 6"));
    assert_eq!(value(id, "stop_reason"), json!("completed"));
    assert_eq!(value(id, "definition_set"), json!("aiperf-0.13"));
    assert_eq!(value(id, "clock_source"), json!("monotonic"));
    assert_eq!(value(id, "client_placement"), json!("same-host"));
    assert_eq!(value(id, "reasoning_accounting"), json!("none"));
    assert_eq!(value(id, "model"), json!(["mock-model"]));
    assert!(
        value(id, "chat_template_digest")
            .as_str()
            .unwrap()
            .starts_with("none:")
    );
    assert!(
        value(id, "cache_procedure")
            .as_str()
            .unwrap()
            .starts_with("none:")
    );
    assert!(
        value(id, "harness")
            .as_str()
            .unwrap()
            .starts_with("inferbench/")
    );
    // Digests tie to the manifest's own fields.
    let workload = m["dataset"]["workload_sha256"].as_str().unwrap();
    assert_eq!(
        value(id, "workload_digest"),
        json!(format!("sha256:{workload}"))
    );
    let tok = m["tokenizer"]["sha256"].as_str().unwrap();
    assert_eq!(
        value(id, "tokenizer_digest"),
        json!(format!("sha256:{tok}"))
    );
    assert_eq!(
        value(id, "token_count_source"),
        json!(format!("tokenizer:sha256:{tok}"))
    );
    let bin = m["tool"]["binary_sha256"].as_str().unwrap();
    assert_eq!(
        value(id, "client_binary_digest"),
        json!(format!("sha256:{bin}"))
    );
    assert!(
        value(id, "server_models")
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(id["pins"]["workload_digest"]["from"], json!("measured"));
    // The declarations, with provenance; a tag alone replaces the built-in image and its
    // digest, and is flagged.
    assert_eq!(
        id["pins"]["image"],
        json!({"value": "repo:tag", "from": "declared", "route": "--declare"})
    );
    assert_eq!(value(id, "note.ticket"), json!("OPS-7"));
    assert!(id["pins"].get("image_digest").is_none());
    assert!(id["missing"].get("image_digest").is_some());
    assert_eq!(flags(id), vec!["image_tag_movable".to_string()]);

    // Grading by §5.2: the image digest is missing (insufficient, every metric); everything
    // else is measured (the profile follows from the fixed concurrency: regression).
    let (g, text) = grade(&dir, &[]);
    assert_eq!(g["definition_set"], json!("aiperf-0.13"));
    assert_eq!(g["overall"], json!("insufficient"));
    assert_eq!(value(id, "profile"), json!("regression"));
    let expected = set(&[("image_digest", "insufficient")]);
    for metric in [
        "request_latency",
        "time_to_first_token",
        "inter_token_latency",
        "output_token_throughput",
        "request_throughput",
        "output_sequence_length",
    ] {
        assert_eq!(downgrades(&g, metric), expected, "{metric}");
    }
    assert!(text.contains("image_tag_movable"), "{text}");
    assert!(text.contains("missing pins:"), "{text}");

    // The offline rewrite keeps the identity as it was.
    let before = identity(&dir);
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(identity(&dir), before);
}

#[test]
fn an_undeclared_simulated_run_is_a_reference_and_an_old_manifest_is_rebuilt() {
    let dir = tmpdir("identity-plain");
    let o = sim_run(&dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = identity(&dir);
    // The built-in server's own deployment: the binary is the image.
    assert_eq!(
        value(&id, "image_digest"),
        value(&id, "client_binary_digest")
    );
    assert!(flags(&id).is_empty());
    // Every contract pin measured, the evidence raw and re-scoring reproducing the summary:
    // nothing downgrades.
    let (g, _) = grade(&dir, &[]);
    assert_eq!(g["overall"], json!("reference"));
    for metric in [
        "request_latency",
        "output_token_throughput",
        "request_count",
    ] {
        assert_eq!(downgrades(&g, metric), set(&[]), "{metric}");
    }
    // A manifest written before identity was recorded: rebuilt from its fields, as
    // recovered pins, and graded the same.
    let path = dir.join("inferbench_manifest.json");
    let mut m = read_json(&path);
    m.as_object_mut().unwrap().remove("identity");
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let (old, _) = grade(&dir, &[]);
    assert_eq!(downgrades(&old, "request_latency"), set(&[]));
    // Another set's metrics, graded under its own names.
    let (v, _) = grade(&dir, &["--definitions", "vllm-bench"]);
    assert_eq!(v["definition_set"], json!("vllm-bench"));
    assert_eq!(tier(&v, "ttft"), "reference");
}

#[test]
fn a_declared_digest_keeps_its_provenance_and_bad_declarations_are_one_line_errors() {
    let dir = tmpdir("identity-file");
    let file = dir.join("sut.toml");
    let digest = format!("sha256:{}", "ab".repeat(32));
    std::fs::write(
        &file,
        format!(
            "image = \"registry/server:2\"\nimage_digest = \"{digest}\"\ngpu_inventory = {{ model = \"H100\", count = 8 }}\n"
        ),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let run_dir = dir.join("run");
    let o = sim_run(
        &run_dir,
        &["--identity", f, "--declare", "profile=regression"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let id = identity(&run_dir);
    let route = format!("--identity {f}");
    assert_eq!(
        id["pins"]["image_digest"],
        json!({"value": digest, "from": "declared", "route": route})
    );
    assert_eq!(
        value(&id, "gpu_inventory"),
        json!({"model": "H100", "count": 8})
    );
    assert!(flags(&id).is_empty(), "a digest is not movable: {id}");
    // The manifest schema knows the identity and its three provenances.
    let schema: Value = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let mut m = read_json(&run_dir.join("inferbench_manifest.json"));
    let errors: Vec<String> = v.iter_errors(&m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    m["identity"]["pins"]["model_revision"] =
        json!({"value": "abc", "from": "recovered", "file": "x.json", "key": "a.b"});
    assert!(v.is_valid(&m));
    m["identity"]["pins"]["model_revision"] = json!({"value": "abc", "from": "declared"});
    assert!(!v.is_valid(&m), "a declaration without its route");
    // A declared digest and declared settings (the GPUs) downgrade nothing; the declared
    // profile agrees with the one measured.
    let (g, _) = grade(&run_dir, &[]);
    assert_eq!(downgrades(&g, "request_latency"), set(&[]));
    assert_eq!(g["overall"], json!("reference"));

    let one_line_error = |args: &[&str], want: &str| {
        let o = sim_run(&dir.join("bad"), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        // One error line (the simulated server's start may be announced before it).
        let errors: Vec<&str> = e.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{e}");
        assert!(errors[0].contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    };
    one_line_error(
        &["--declare", "image"],
        "--declare 'image': expected KEY=VALUE",
    );
    one_line_error(
        &["--declare", "colour=blue"],
        "--declare: unknown identity key 'colour'",
    );
    one_line_error(
        &["--declare", "random_seed=3"],
        "'random_seed' is measured by the run and cannot be declared",
    );
    std::fs::write(&file, "precision = \"bf16\"\ncolour = 1\n").unwrap();
    one_line_error(
        &["--identity", f],
        &format!("--identity {f}: unknown identity key 'colour'"),
    );
    std::fs::write(&file, "precision = \"bf16\"\nimage = \n").unwrap();
    one_line_error(&["--identity", f], &format!("--identity {f}: line 2:"));
    // A measured pin the run knows, contradicted.
    one_line_error(
        &["--declare", "client_placement=other-host"],
        "'client_placement' declared as \"other-host\" but the run measured \"same-host\"",
    );
    assert!(!dir.join("bad").join("inferbench_manifest.json").exists());
    // inspect writes no manifest: the flags are refused, not ignored.
    let o = run(&["inspect", "--declare", "image=x", "--ui", "none"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--declare and --identity are for profile"));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data/genai_perf")
        .join(name)
}

#[test]
fn a_genai_perf_fixture_is_graded_with_the_reason_for_each_downgrade() {
    let dir = tmpdir("identity-gp");
    let src = fixture("G12-chat-stream");
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    let tok = fixture("tokenizer");
    let (g, text) = grade(&dir, &["--tokenizer", tok.to_str().unwrap()]);
    assert_eq!(g["overall"], json!("unusable"));
    // By §5.2, from the fixture's input_config and files: the deployment is not in the
    // artifact (image digest, weights, precision, runtime args: insufficient for all); no
    // failed-request count (unusable for rates, insufficient for latencies); no stop reason
    // (insufficient for rates); no chat template (token counts, first token); and three
    // contract pins no row names (cache procedure, profile, request order: comparable).
    let sut = [
        ("image_digest", "insufficient"),
        ("model_revision", "insufficient"),
        ("precision", "insufficient"),
        ("runtime_args", "insufficient"),
        ("cache_procedure", "comparable"),
        ("profile", "comparable"),
        ("request_order", "comparable"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut v = sut.to_vec();
        v.extend_from_slice(extra);
        set(&v)
    };
    assert_eq!(
        downgrades(&g, "request_throughput"),
        with(&[
            ("error_counts", "unusable"),
            ("stop_reason", "insufficient")
        ])
    );
    assert_eq!(
        downgrades(&g, "request_latency"),
        with(&[("error_counts", "insufficient")])
    );
    assert_eq!(
        downgrades(&g, "time_to_first_token"),
        with(&[
            ("error_counts", "insufficient"),
            ("chat_template_digest", "insufficient")
        ])
    );
    assert_eq!(
        downgrades(&g, "inter_token_latency"),
        with(&[("error_counts", "insufficient")])
    );
    assert_eq!(
        downgrades(&g, "output_sequence_length"),
        with(&[("chat_template_digest", "insufficient")])
    );
    assert_eq!(tier(&g, "request_throughput"), "unusable");
    assert_eq!(tier(&g, "request_latency"), "insufficient");
    // The table names each field with its reason.
    assert!(
        text.contains(
            "error_counts (unusable): failed requests are not accounted for: the rate's denominator is unknown"
        ),
        "{text}"
    );
    assert!(
        text.contains("chat_template_digest: not in the artifact"),
        "{text}"
    );
}

/// The bridge needs one frozen workload on both sides: a replay of GenAI-Perf's
/// `inputs.json` by inferbench and the import of that artifact carry the same workload
/// digest, computed here by hand (each body's compact JSON, key order kept: its length as 8
/// little-endian bytes, then its bytes, in order).
#[test]
fn a_replay_of_a_genai_perf_inputs_json_carries_the_imports_workload_digest() {
    use sha2::{Digest, Sha256};
    let src = fixture("G12-chat-stream");
    let inputs = src.join("inputs.json");
    let mut h = Sha256::new();
    for entry in read_json(&inputs)["data"].as_array().unwrap() {
        for body in entry["payload"].as_array().unwrap() {
            let text = serde_json::to_string(body).unwrap();
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
    }
    let want = format!("sha256:{}", hex::encode(h.finalize()));

    let root = tmpdir("identity-replay");
    let run_dir = root.join("replay");
    let o = run(&[
        "profile",
        "--input-file",
        inputs.to_str().unwrap(),
        "--model",
        "mock-model",
        "--streaming",
        "--request-count",
        "4",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        run_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(value(&identity(&run_dir), "workload_digest"), json!(want));

    let l = root.join("ledger");
    let o = run(&["ledger", "init", l.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "ledger",
        "--ledger",
        l.to_str().unwrap(),
        "import",
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let packets: Vec<PathBuf> = std::fs::read_dir(l.join("packets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(packets.len(), 1);
    let id = &read_json(&packets[0].join("manifest.json"))["identity"];
    assert_eq!(id["pins"]["workload_digest"]["value"], json!(want));
    assert_eq!(id["pins"]["workload_digest"]["file"], json!("inputs.json"));
}
