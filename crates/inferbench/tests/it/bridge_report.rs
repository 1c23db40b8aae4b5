//! Ledger packets as runs, `compare --ledger`, and `bridge report`, through the binary.
//!
//! One ledger holds a GenAI-Perf import (the G12 fixture, declared on the simulated
//! server's deployment pins), a run of ours against the built-in simulated server, a
//! comparison of the two and an epoch. `grade`, `metrics` and `compare` give the same
//! numbers on the packets as on the original directories; a packet refuses writes; the
//! comparison is one `comparison.record`; the bridge report holds what was put in, is valid
//! against its schema and is byte-identical when built twice.

use crate::common;

use std::path::{Path, PathBuf};

use common::{read_json, run, stderr, tmpdir};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data/genai_perf")
        .join(rel)
}

fn tok() -> String {
    data("tokenizer").display().to_string()
}

fn ok(args: &[&str]) -> (String, String) {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    (String::from_utf8(o.stdout).unwrap(), err)
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

fn entries(l: &Path) -> Vec<Value> {
    std::fs::read_to_string(l.join("ledger.jsonl"))
        .unwrap()
        .lines()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect()
}

fn packet(l: &Path, e: &Value) -> PathBuf {
    l.join("packets")
        .join(e["body"]["packet"].as_str().unwrap().replacen(':', "-", 1))
}

fn profile(dir: &Path) {
    ok(&[
        "profile",
        "--streaming",
        "--request-count",
        "24",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "4",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        p(dir),
    ]);
}

struct World {
    root: PathBuf,
    ledger: PathBuf,
    ours_dir: PathBuf,
    import_dir: PathBuf,
    ours: Value,
    import: Value,
    image_digest: String,
}

/// A ledger with the import (declared on our deployment's pins) and our run.
fn world(name: &str) -> World {
    let root = tmpdir(name);
    let (ours_dir, ledger) = (root.join("run"), root.join("ledger"));
    let import_dir = data("G12-chat-stream");
    profile(&ours_dir);
    let m = read_json(&ours_dir.join("inferbench_manifest.json"));
    let image_digest = m["identity"]["pins"]["image_digest"]["value"]
        .as_str()
        .expect("the simulated server's image digest is measured")
        .to_string();
    let l = p(&ledger);
    ok(&["ledger", "--ledger", l, "init"]);
    // The simulated server stands in for the legacy deployment: the import is declared on
    // its pins (the fixture recorded tokenizer revision `main`; the stand-in's is
    // `simulated`).
    let (d1, d2, d3) = (
        format!("image_digest={image_digest}"),
        "model_revision=simulated".to_string(),
        "tokenizer_revision=simulated".to_string(),
    );
    ok(&[
        "ledger",
        "--ledger",
        l,
        "import",
        p(&import_dir),
        "--tokenizer",
        &tok(),
        "--declare",
        &d1,
        "--declare",
        &d2,
        "--declare",
        &d3,
    ]);
    ok(&["ledger", "--ledger", l, "add", p(&ours_dir)]);
    let es = entries(&ledger);
    assert_eq!(es.len(), 3);
    World {
        import: es[1].clone(),
        ours: es[2].clone(),
        root,
        ledger,
        ours_dir,
        import_dir,
        image_digest,
    }
}

#[test]
fn packets_read_as_their_runs_and_refuse_writes() {
    let w = world("packets-as-runs");
    let (po, pi) = (packet(&w.ledger, &w.ours), packet(&w.ledger, &w.import));
    // The packet of ours carries the run's manifest byte for byte.
    assert_eq!(
        std::fs::read(po.join("run_manifest.json")).unwrap(),
        std::fs::read(w.ours_dir.join("inferbench_manifest.json")).unwrap()
    );
    // grade: the same grade document.
    for (orig, pk, extra) in [
        (&w.ours_dir, &po, vec![]),
        (&w.import_dir, &pi, vec!["--tokenizer", tok().leak()]),
    ] {
        let (a, b) = (w.root.join("ga.json"), w.root.join("gb.json"));
        let mut args = vec!["grade", p(orig), "--json", p(&a)];
        args.extend(&extra);
        ok(&args);
        let mut args = vec!["grade", p(pk), "--json", p(&b)];
        args.extend(&extra);
        ok(&args);
        assert_eq!(read_json(&a), read_json(&b), "grade of {}", pk.display());
    }
    // metrics: the same table, under the native set and another.
    for (orig, pk) in [(&w.ours_dir, &po), (&w.import_dir, &pi)] {
        for set in ["aiperf-0.13", "genai-perf-0.0.13"] {
            let t = tok();
            let args = |d: &Path| {
                vec![
                    "metrics".to_string(),
                    p(d).to_string(),
                    "--definitions".into(),
                    set.into(),
                    "--tokenizer".into(),
                    t.clone(),
                ]
            };
            let a = run(&args(orig).iter().map(String::as_str).collect::<Vec<_>>());
            let b = run(&args(pk).iter().map(String::as_str).collect::<Vec<_>>());
            assert!(a.status.success() && b.status.success(), "{}", stderr(&b));
            assert!(!a.stdout.is_empty());
            assert_eq!(a.stdout, b.stdout, "metrics {set} of {}", pk.display());
        }
    }
    // Our packet re-scored under its own set checks itself against the stored summary.
    let (_, err) = ok(&["metrics", p(&po)]);
    assert!(
        err.contains("identical to profile_export_aiperf.json"),
        "{err}"
    );
    // compare: the same intervals and verdicts on packets as on the directories.
    let cmp = |b: &Path, c: &Path, out: &Path| {
        ok(&[
            "compare",
            p(b),
            p(c),
            "--definitions",
            "genai-perf-0.0.10",
            "--allow-epoch-change",
            "--tokenizer",
            &tok(),
            "--json",
            p(out),
        ]);
        read_json(out)
    };
    let a = cmp(&w.import_dir, &w.ours_dir, &w.root.join("ca.json"));
    let b = cmp(&pi, &po, &w.root.join("cb.json"));
    assert!(!a["metrics"].as_array().unwrap().is_empty());
    for k in ["metrics", "worse", "exit_code", "definition_set"] {
        let strip = |v: &Value| {
            // Paths name the directories read; everything else must agree.
            let mut v = v.clone();
            if let Some(ms) = v.as_array_mut() {
                for m in ms {
                    m.as_object_mut().map(|o| o.remove("path"));
                }
            }
            v
        };
        assert_eq!(strip(&a[k]), strip(&b[k]), "compare {k}");
    }
    // A packet is immutable.
    let before = std::fs::read_dir(&po).unwrap().count();
    for args in [
        vec!["metrics", p(&po), "--write"],
        vec!["metrics", p(&po), "--format", "json"],
        vec!["crosswalk", p(&po), "--from", "genai-perf-0.0.13"],
        vec![
            "metrics",
            p(&pi),
            "--format",
            "json",
            "--tokenizer",
            tok().leak(),
        ],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("a ledger packet is immutable"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert_eq!(std::fs::read_dir(&po).unwrap().count(), before);
    assert!(!pi.join("inferbench_summary.json").exists());
    ok(&["ledger", "--ledger", p(&w.ledger), "verify"]);
    // Adding a packet to a ledger again is refused by name.
    let o = run(&["ledger", "--ledger", p(&w.ledger), "add", p(&po)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a ledger packet, already recorded"),
        "{}",
        stderr(&o)
    );
}

/// `compare --ledger` by cid, then the epoch, then the report.
fn compared(w: &World) -> (Value, Value) {
    let l = p(&w.ledger);
    let json = w.root.join("cmp.json");
    let (ic, oc) = (
        w.import["cid"].as_str().unwrap(),
        w.ours["cid"].as_str().unwrap(),
    );
    ok(&[
        "compare",
        &ic[..20],
        &oc[..20],
        "--ledger",
        l,
        "--definitions",
        "genai-perf-0.0.10",
        "--allow-epoch-change",
        "--tokenizer",
        &tok(),
        "--margin",
        "time_to_first_token.p99=±5%",
        "--margin",
        "request_latency.avg=±50%",
        "--json",
        p(&json),
    ]);
    (entries(&w.ledger).pop().unwrap(), read_json(&json))
}

#[test]
fn compare_with_a_ledger_records_one_comparison() {
    let w = world("compare-ledger");
    let (e, report) = compared(&w);
    let es = entries(&w.ledger);
    assert_eq!(es.len(), 4, "exactly one entry appended");
    assert_eq!(e["kind"], "comparison.record");
    let b = &e["body"];
    assert_eq!(b["baseline"], serde_json::json!([w.import["cid"]]));
    assert_eq!(b["candidate"], serde_json::json!([w.ours["cid"]]));
    assert_eq!(b["definition_set"], "genai-perf-0.0.10");
    assert_eq!(b["margins"]["source"], "declared");
    assert_eq!(b["margins"]["by_metric"]["time_to_first_token.p99"], "±5%");
    // Each verdict is the report's; the digest is the canonical report's.
    let ms = report["metrics"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for m in ms {
        assert_eq!(b["verdicts"][m["key"].as_str().unwrap()], m["verdict"]);
    }
    let want_overall = if ms.iter().any(|m| m["verdict"] == "worse") {
        "worse"
    } else if ms.iter().any(|m| m["verdict"] == "inconclusive") {
        "inconclusive"
    } else if ms.iter().all(|m| m["verdict"] == "better") {
        "better"
    } else {
        "equivalent"
    };
    assert_eq!(b["overall"], want_overall);
    assert_eq!(
        b["report_digest"],
        inferbench_core::canonical::digest(&report).unwrap()
    );
    ok(&["ledger", "--ledger", p(&w.ledger), "verify"]);
    // A directory outside the ledger is refused in one line, and nothing is appended.
    let other = w.root.join("other");
    profile(&other);
    let o = run(&[
        "compare",
        p(&w.ours_dir),
        p(&other),
        "--ledger",
        p(&w.ledger),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("other: not in the ledger"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // An unknown cid too.
    let o = run(&[
        "compare",
        "deadbeefdeadbeef",
        p(&w.ours_dir),
        "--ledger",
        p(&w.ledger),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("deadbeefdeadbeef"), "{}", stderr(&o));
    assert_eq!(entries(&w.ledger).len(), 4);
}

#[test]
fn the_bridge_report_holds_what_the_ledger_holds() {
    let w = world("bridge-report");
    let (cmp, _) = compared(&w);
    let l = p(&w.ledger);
    let ic = w.import["cid"].as_str().unwrap();
    ok(&[
        "ledger",
        "--ledger",
        l,
        "epoch",
        "declare",
        "--name",
        "e-legacy",
        "--from",
        ic,
        "--reason",
        "the GenAI-Perf era",
    ]);
    let epoch = entries(&w.ledger).pop().unwrap();
    let (j1, m1, j2, m2) = (
        w.root.join("b1.json"),
        w.root.join("b1.md"),
        w.root.join("b2.json"),
        w.root.join("b2.md"),
    );
    for (j, m) in [(&j1, &m1), (&j2, &m2)] {
        ok(&["bridge", "report", l, "--json", p(j), "--markdown", p(m)]);
    }
    assert_eq!(std::fs::read(&j1).unwrap(), std::fs::read(&j2).unwrap());
    assert_eq!(std::fs::read(&m1).unwrap(), std::fs::read(&m2).unwrap());
    let r = read_json(&j1);
    let schema = read_json(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schemas/bridge-report.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errs: Vec<String> = v.iter_errors(&r).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(r["ledger"]["entries"], 5);
    assert_eq!(r["ledger"]["head"], epoch["hash"]);

    // Preserved: the import as its entry recorded it, and the epoch it anchors.
    let ib = &w.import["body"];
    let pr = &r["preserved"][0];
    assert_eq!(r["preserved"].as_array().unwrap().len(), 1);
    assert_eq!(pr["run"], w.import["cid"]);
    assert_eq!(pr["tool"], "genai-perf");
    assert_eq!(pr["version"], "0.0.12");
    assert_eq!(pr["importer"], ib["importer"]);
    assert_eq!(pr["artifacts"], ib["source"]["artifacts"]);
    assert_eq!(pr["artifacts"].as_array().unwrap().len(), 4);
    assert_eq!(pr["tiers"], ib["grade"]["metrics"]);
    assert_eq!(pr["tiers"]["request_throughput"], "unusable");
    assert_eq!(pr["epochs"], serde_json::json!(["e-legacy"]));
    assert_eq!(r["ours"][0]["run"], w.ours["cid"]);

    // Validated mappings: the crosswalk of the import's set, and the comparison on the
    // same deployment (the image digest declared on the import is the one our run measured).
    let mp = &r["mappings"][0];
    assert_eq!(mp["from"], "genai-perf-0.0.10");
    assert_eq!(mp["to"], "aiperf-0.13");
    assert_eq!(mp["records"], 60);
    let rows = mp["rows"].as_array().unwrap();
    let ttft = rows
        .iter()
        .find(|x| x["from_metric"] == "time_to_first_token")
        .unwrap();
    assert_eq!(ttft["to_metric"], "time_to_first_token");
    assert!(
        rows.iter()
            .any(|x| x["from_metric"] == "input_sequence_length")
    );
    let eq = &r["equivalence"][0];
    assert_eq!(r["equivalence"].as_array().unwrap().len(), 1);
    assert_eq!(eq["comparison"], cmp["cid"]);
    assert_eq!(eq["baseline"], serde_json::json!([w.import["cid"]]));
    assert_eq!(eq["candidate"], serde_json::json!([w.ours["cid"]]));
    assert_eq!(eq["verdicts"], cmp["body"]["verdicts"]);
    assert_eq!(eq["overall"], cmp["body"]["overall"]);
    assert_eq!(eq["sut"]["image_digest"], w.image_digest.as_str());
    assert_eq!(eq["sut"]["model_revision"], "simulated");

    // Conditional: every metric of the import below reference with its fields, the
    // comparison's inconclusive metrics, and our run decided against the legacy epoch.
    let cd = &r["conditional"];
    let grades = cd["grades"].as_array().unwrap();
    let of_import: Vec<&Value> = grades
        .iter()
        .filter(|g| g["run"] == w.import["cid"])
        .collect();
    let below: Vec<(&String, &Value)> = ib["grade"]["metrics"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, t)| *t != "reference")
        .collect();
    assert_eq!(of_import.len(), below.len());
    let rt = of_import
        .iter()
        .find(|g| g["metric"] == "request_throughput")
        .unwrap();
    assert_eq!(rt["tier"], "unusable");
    assert!(
        rt["downgrades"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["field"] == "error_counts" && d["tier"] == "unusable")
    );
    let inconclusive: Vec<&str> = cmp["body"]["verdicts"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| *v == "inconclusive")
        .map(|(k, _)| k.as_str())
        .collect();
    let listed: Vec<&str> = cd["inconclusive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["metric"].as_str().unwrap())
        .collect();
    assert_eq!(listed, inconclusive);
    let d = &cd["decisions"][0];
    assert_eq!(d["run"], w.ours["cid"]);
    assert_eq!(d["epoch"], "e-legacy");
    // The import holds no request order: a contract pin unknown on a side.
    assert_eq!(d["outcome"], "insufficient");
    assert!(
        d["pins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "request_order")
    );

    // New epochs: the one declared, without a parent.
    let ne = &r["new_epochs"][0];
    assert_eq!(ne["epoch"], "e-legacy");
    assert_eq!(ne["cid"], epoch["cid"]);
    assert_eq!(ne["parent"], Value::Null);
    assert_eq!(ne["reason"], "the GenAI-Perf era");
    assert_eq!(ne["evidence"], serde_json::json!([w.import["cid"]]));
    assert_eq!(r["gates"], serde_json::json!([]));

    // Counts agree with the sections.
    let n = |v: &Value| v.as_array().unwrap().len();
    assert_eq!(r["counts"]["legacy_runs"], 1);
    assert_eq!(r["counts"]["equivalence"], 1);
    assert_eq!(
        r["counts"]["conditional"],
        n(&cd["grades"]) + n(&cd["decisions"]) + n(&cd["inconclusive"]) + n(&cd["sut"])
    );

    // The Markdown names every run by its short cid, under each heading.
    let md = std::fs::read_to_string(&m1).unwrap();
    for h in [
        "## Preserved",
        "## Validated mappings",
        "## Conditional",
        "## New epochs",
        "## Gate verdicts",
    ] {
        assert!(md.contains(h), "{h}");
    }
    for c in [&w.import["cid"], &w.ours["cid"], &cmp["cid"]] {
        assert!(md.contains(&c.as_str().unwrap()[..19]), "{c}");
    }

    // --record: one bridge.record with the digest of the canonical JSON, verify still ok.
    let (_, err) = ok(&["bridge", "report", l, "--json", p(&j2), "--record"]);
    assert!(err.contains("recorded bridge.record"), "{err}");
    let rec = entries(&w.ledger).pop().unwrap();
    assert_eq!(rec["kind"], "bridge.record");
    let bytes = std::fs::read(&j2).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&j1).unwrap(),
        "recorded from the same state"
    );
    assert_eq!(
        rec["body"]["report_digest"],
        inferbench_core::canonical::sha256_id(&bytes[..bytes.len() - 1])
    );
    assert_eq!(rec["body"]["counts"], r["counts"]);
    ok(&["ledger", "--ledger", l, "verify"]);

    // The same import without the deployment declarations: its recorded tokenizer
    // revision (`main`) is not the stand-in's, so that comparison is not a same-deployment
    // proof and stays conditional, naming the pin.
    ok(&[
        "ledger",
        "--ledger",
        l,
        "import",
        p(&w.import_dir),
        "--tokenizer",
        &tok(),
    ]);
    let bare = entries(&w.ledger).pop().unwrap();
    let oc = w.ours["cid"].as_str().unwrap();
    ok(&[
        "compare",
        bare["cid"].as_str().unwrap(),
        oc,
        "--ledger",
        l,
        "--definitions",
        "genai-perf-0.0.10",
        "--allow-epoch-change",
        "--tokenizer",
        &tok(),
        "--margin",
        "request_latency.avg=±50%",
    ]);
    let second = entries(&w.ledger).pop().unwrap();
    ok(&["bridge", "report", l, "--json", p(&j2)]);
    let r2 = read_json(&j2);
    assert_eq!(r2["preserved"].as_array().unwrap().len(), 2);
    assert_eq!(r2["equivalence"].as_array().unwrap().len(), 1);
    let sut = &r2["conditional"]["sut"];
    assert_eq!(sut.as_array().unwrap().len(), 1);
    assert_eq!(sut[0]["comparison"], second["cid"]);
    assert_eq!(sut[0]["status"], "differs");
    assert_eq!(sut[0]["pins"], serde_json::json!(["tokenizer_revision"]));
}
