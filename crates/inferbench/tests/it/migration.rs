//! The seed's whole migration procedure, as docs/migration.md walks it, step by step through
//! the binary: import a GenAI-Perf baseline, grade it, inspect the adapter, rerun the same
//! frozen requests with inferbench against the same deployment (the built-in simulated
//! server stands in for it), score both ways, crosswalk, compare with `--ledger`, decide and
//! declare the epochs, (gate), and write the bridge report. Each step's output is checked
//! for the facts that matter.

use crate::common;

use std::path::{Path, PathBuf};

use common::{read_json, run, stderr, tmpdir};
use serde_json::{Value, json};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data/genai_perf")
        .join(rel)
}

fn ok(args: &[&str]) -> (String, String) {
    let o = run(args);
    let err = stderr(&o);
    assert!(o.status.success(), "{args:?}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

fn last_entry(l: &Path) -> Value {
    let text = std::fs::read_to_string(l.join("ledger.jsonl")).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

/// The deployment both harnesses ran on, as the operator declares it (a digest and a full
/// commit id, so the pins can hold a `reference`).
const IMAGE: &str = "sha256:3f1c5d0000000000000000000000000000000000000000000000000000000001";
const WEIGHTS: &str = "7e4f2a1c00000000000000000000000000000001";

fn deployment() -> Vec<String> {
    [
        format!("image_digest={IMAGE}"),
        format!("model_revision={WEIGHTS}"),
        "precision=bf16".into(),
    ]
    .into_iter()
    .flat_map(|d| ["--declare".to_string(), d])
    .collect()
}

#[test]
fn the_migration_walkthrough_runs_end_to_end() {
    let root = tmpdir("migration");
    let legacy = data("G12-chat-stream");
    let tok = p(&data("tokenizer")).to_string();
    let l = root.join("baselines");
    let lp = p(&l).to_string();
    let new_run = root.join("new-run");

    // 1. Freeze the legacy evidence.
    ok(&["ledger", "init", &lp]);
    let mut args: Vec<String> = [
        "ledger",
        "--ledger",
        &lp,
        "import",
        p(&legacy),
        "--tokenizer",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(tok.clone());
    args.extend(deployment());
    for d in [
        "profile=regression",
        "request_order=sequential",
        "cache_procedure=none: the simulated server keeps no cache",
        "chat_template_digest=none: the simulated server applies no chat template",
    ] {
        args.extend(["--declare".to_string(), d.to_string()]);
    }
    let (out, _) = ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.contains("line 2 run.import"), "{out}");
    let import = last_entry(&l);
    let ib = &import["body"];
    assert_eq!(ib["source"]["tool"], "genai-perf");
    assert_eq!(ib["source"]["version"], "0.0.12");
    assert_eq!(ib["definition_set"], "genai-perf-0.0.10");
    assert_eq!(ib["recovered"]["tokenizer_revision"]["value"], "main");
    for k in ["image_digest", "model_revision", "precision", "profile"] {
        assert!(
            ib["declared"].as_array().unwrap().contains(&json!(k)),
            "{k}"
        );
    }
    let import_cid = import["cid"].as_str().unwrap().to_string();

    // 2. Grade it: rates unusable (Perf Analyzer keeps no failure count).
    let gj = root.join("grade.json");
    ok(&["grade", p(&legacy), "--tokenizer", &tok, "--json", p(&gj)]);
    let g = read_json(&gj);
    let rt = g["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "request_throughput")
        .unwrap()
        .clone();
    assert_eq!(rt["tier"], "unusable");
    assert!(rt["downgrades"][0]["field"] == "error_counts", "{rt}");

    // 3. Inspect the adapter on the deployment, with the legacy requests.
    let input = legacy.join("inputs.json");
    let common = [
        "-m",
        "mock-model",
        "--streaming",
        "--input-file",
        p(&input),
        "--tokenizer",
        &tok,
        "--extra-inputs",
        "ignore_eos:true",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "1",
    ];
    let mut args = vec!["inspect"];
    args.extend(common);
    let (out, _) = ok(&args);
    assert!(out.contains("\"ignore_eos\": true"), "{out}");
    assert!(out.contains("\"max_tokens\": 16"), "{out}");
    assert!(out.contains("first token"), "{out}");

    // 4. Rerun the same frozen requests on the same deployment, and add the run.
    let mut args: Vec<String> = vec!["profile".into()];
    args.extend(common.iter().map(|s| s.to_string()));
    for a in [
        "--concurrency",
        "4",
        "--request-count",
        "60",
        "--random-seed",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        p(&new_run),
        "--declare",
        "profile=regression",
        // GenAI-Perf recorded the tokenizer revision it loaded (`main`): the rerun uses it.
        "--declare",
        "tokenizer_revision=main",
    ] {
        args.push(a.into());
    }
    args.extend(deployment());
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let (out, _) = ok(&["ledger", "--ledger", &lp, "add", p(&new_run)]);
    assert!(out.contains("line 3 run.record"), "{out}");
    let ours = last_entry(&l);
    let ours_cid = ours["cid"].as_str().unwrap().to_string();
    // The same frozen requests: the workload digest is the legacy run's.
    let pk = |e: &Value| {
        l.join("packets")
            .join(e["body"]["packet"].as_str().unwrap().replacen(':', "-", 1))
    };
    let pins = |e: &Value| read_json(&pk(e).join("manifest.json"))["identity"]["pins"].clone();
    let (pi, po) = (pins(&import), pins(&ours));
    assert_eq!(
        po["workload_digest"]["value"],
        pi["workload_digest"]["value"]
    );
    assert_eq!(po["image_digest"]["value"], IMAGE);

    // 5. Score it both ways.
    let (out, _) = ok(&["metrics", p(&new_run), "--definitions", "genai-perf-0.0.10"]);
    assert!(out.contains("inferbench | genai-perf-0.0.10"), "{out}");
    assert!(out.contains("time_to_second_token"), "{out}");
    let (_, err) = ok(&["metrics", p(&new_run)]);
    assert!(
        err.contains("identical to profile_export_aiperf.json"),
        "{err}"
    );

    // 6. The crosswalk of each run, legacy set to AIPerf's.
    for (dir, out_dir) in [
        (&legacy, root.join("xw-legacy")),
        (&new_run, root.join("xw-new")),
    ] {
        ok(&[
            "crosswalk",
            p(dir),
            "--from",
            "genai-perf-0.0.10",
            "--to",
            "aiperf-0.13",
            "--tokenizer",
            &tok,
            "--output-dir",
            p(&out_dir),
        ]);
        let c = read_json(&out_dir.join("crosswalk.json"));
        assert_eq!(c["facts"]["records"], 60);
        let ttft = c["mappings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["from_metric"] == "time_to_first_token")
            .unwrap()
            .clone();
        assert_eq!(ttft["to_metric"], "time_to_first_token");
        assert_eq!(ttft["comparable"], true, "{ttft}");
    }

    // 7. Compare, recorded in the ledger (sides by cid).
    let cmp = root.join("cmp.json");
    ok(&[
        "compare",
        &import_cid[..20],
        &ours_cid[..20],
        "--ledger",
        &lp,
        "--definitions",
        "genai-perf-0.0.10",
        "--allow-epoch-change",
        "--tokenizer",
        &tok,
        "--margin",
        "time_to_first_token.p99=±5%",
        "--margin",
        "request_latency.avg=±3%",
        "--json",
        p(&cmp),
    ]);
    let report = read_json(&cmp);
    let rec = last_entry(&l);
    assert_eq!(rec["kind"], "comparison.record");
    assert_eq!(rec["body"]["baseline"], json!([import_cid]));
    assert_eq!(rec["body"]["candidate"], json!([ours_cid]));
    for m in report["metrics"].as_array().unwrap() {
        assert_eq!(
            rec["body"]["verdicts"][m["key"].as_str().unwrap()],
            m["verdict"]
        );
    }
    // The epoch check names the cross-tool pins compared as written (docs/baselines.md).
    let changed: Vec<&str> = report["epoch"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"stop_rule"), "{changed:?}");
    assert!(!changed.contains(&"workload_digest"), "{changed:?}");

    // 8. Decide, and declare the epochs: the legacy one, then ours with it as parent.
    ok(&[
        "ledger",
        "--ledger",
        &lp,
        "epoch",
        "declare",
        "--name",
        "e-2025-genai-perf",
        "--from",
        &import_cid,
        "--reason",
        "the GenAI-Perf baseline",
    ]);
    let (out, _) = ok(&[
        "ledger",
        "--ledger",
        &lp,
        "decide",
        &ours_cid,
        "--against",
        "e-2025-genai-perf",
    ]);
    assert!(out.contains("decision: new-epoch"), "{out}");
    assert!(out.contains("stop_rule"), "{out}");
    ok(&[
        "ledger",
        "--ledger",
        &lp,
        "epoch",
        "declare",
        "--name",
        "e-2026-inferbench",
        "--from",
        &ours_cid,
        "--parent",
        "e-2025-genai-perf",
        "--reason",
        "inferbench replaces GenAI-Perf",
    ]);
    let epoch = last_entry(&l);
    assert_eq!(epoch["body"]["decision"], "new-epoch");

    // 9. Gate the new run by cid, against the new epoch; the verdict goes into the ledger.
    let spec = root.join("acceptance.toml");
    std::fs::write(&spec, GATE_SPEC).unwrap();
    let (vj, vm) = (root.join("verdict.json"), root.join("acceptance.md"));
    let (out, _) = ok(&[
        "gate",
        "--spec",
        p(&spec),
        &ours_cid[..20],
        "--ledger",
        &lp,
        "--json",
        p(&vj),
        "--markdown",
        p(&vm),
    ]);
    assert!(out.contains("verdict: PASS"), "{out}");
    let v = read_json(&vj);
    assert_eq!(v["epoch"]["id"], "e-2026-inferbench");
    assert_eq!(v["epoch"]["fingerprint"], epoch["body"]["fingerprint"]);
    assert_eq!(v["epoch"]["match"], true);
    let gate = last_entry(&l);
    assert_eq!(gate["kind"], "gate.verdict");
    assert_eq!(gate["body"]["verdict"], "PASS");
    assert!(
        std::fs::read_to_string(&vm)
            .unwrap()
            .contains("**Verdict: PASS**")
    );

    // 10. The bridge report, recorded.
    let (bj, bm) = (root.join("bridge.json"), root.join("bridge.md"));
    ok(&[
        "bridge",
        "report",
        &lp,
        "--json",
        p(&bj),
        "--markdown",
        p(&bm),
        "--record",
    ]);
    let r = read_json(&bj);
    assert_eq!(r["preserved"][0]["run"], json!(import_cid));
    assert_eq!(r["preserved"][0]["epochs"], json!(["e-2025-genai-perf"]));
    assert_eq!(r["equivalence"][0]["comparison"], rec["cid"]);
    assert_eq!(r["equivalence"][0]["sut"]["image_digest"], IMAGE);
    assert_eq!(r["equivalence"][0]["sut"]["model_revision"], WEIGHTS);
    let epochs: Vec<&str> = r["new_epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["epoch"].as_str().unwrap())
        .collect();
    assert_eq!(epochs, ["e-2025-genai-perf", "e-2026-inferbench"]);
    let decided: Vec<&str> = r["new_epochs"][1]["decided_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(decided.contains(&"stop_rule"), "{decided:?}");
    let md = std::fs::read_to_string(&bm).unwrap();
    assert!(md.contains(&import_cid[..19]) && md.contains(&ours_cid[..19]));
    assert!(md.contains("### Equivalence on the same deployment"));
    assert_eq!(last_entry(&l)["kind"], "bridge.record");
    let (out, _) = ok(&["ledger", "--ledger", &lp, "verify"]);
    assert_eq!(r["gates"][0]["cid"], gate["cid"]);
    assert_eq!(r["gates"][0]["verdict"], "PASS");
    assert!(out.starts_with("ok: 8 entries, 2 packets"), "{out}");
}

/// The acceptance spec of step 9: the new epoch, its regression profile, and SLOs the
/// simulated deployment meets (a real one takes them from the service contract).
const GATE_SPEC: &str = r#"
[gate]
name = "migration-acceptance"
epoch = "e-2026-inferbench"
profile = "regression"
on_missing = "fail"

[[rule]]
id = "serialization.contract"
family = "serialization"
require = ["streaming", "no_unparsed_events", "terminated"]

[[rule]]
id = "load.delivered"
family = "load_delivery"
dispatched_fraction_min = 0.999
send_lag_p99_ms_max = 10.0

[[rule]]
id = "latency.ttft.p50"
family = "latency"
metric = "time_to_first_token"
stat = "p50"
limit = 200
unit = "ms"

[[rule]]
id = "goodput.attainment"
family = "goodput"
slo = { time_to_first_token = "500 ms", request_latency = "2 s" }
min_fraction = 0.9
"#;
