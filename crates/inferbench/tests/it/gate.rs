//! `inferbench gate` through the binary: the shipped example spec over a clean run of the
//! built-in simulated server (PASS, byte-identical twice, valid against the schema, the
//! Markdown packet), the same spec over a run with 10 % injected errors (FAIL on goodput), a
//! ledger run named by cid (same verdict, recorded, the ledger still verifies), and bad specs
//! (one line naming file, line and field; exit 2; nothing recorded).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::*;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/gate.toml")
}

/// The run examples/gate.toml documents, with `extra` flags.
fn demo_run(name: &str, extra: &[&str]) -> PathBuf {
    let d = tmpdir(name);
    let mut args = vec![
        "profile",
        "--concurrency",
        "8",
        "--request-count",
        "400",
        "--isl",
        "128",
        "--osl",
        "32",
        "--extra-inputs",
        "ignore_eos:true",
        "min_tokens:32",
        "--sim-itl-ms",
        "2",
        "--random-seed",
        "42",
        "--ui",
        "none",
        "--artifact-dir",
        d.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    d
}

fn clean() -> PathBuf {
    static C: OnceLock<PathBuf> = OnceLock::new();
    C.get_or_init(|| demo_run("gate-clean", &[])).clone()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_example_spec_passes_a_clean_run_and_says_the_same_twice() {
    let out = tmpdir("gate-pass-out");
    let (a, b, md) = (out.join("a.json"), out.join("b.json"), out.join("p.md"));
    let run_dir = clean();
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        s(&run_dir),
        "--json",
        s(&a),
        "--markdown",
        s(&md),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("verdict: PASS"), "{}", stdout(&o));
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        s(&run_dir),
        "--json",
        s(&b),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let (ja, jb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ja, jb, "two evaluations differ");

    let v: serde_json::Value = serde_json::from_slice(&ja).unwrap();
    let schema = read_json(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schemas/gate-verdict.schema.json"),
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(v["verdict"], "PASS");
    assert_eq!(v["preconditions"], "PASS");
    assert_eq!(v["gate"]["name"], "demo-chat-128-32");
    // The spec's digest is the sha256 of its bytes.
    let bytes = std::fs::read(example()).unwrap();
    assert_eq!(
        v["gate"]["digest"],
        inferbench_core::canonical::sha256_id(&bytes)
    );
    // The run's id is the sha256 of its evidence file.
    let ev = std::fs::read(run_dir.join("inferbench_evidence.jsonl")).unwrap();
    assert_eq!(
        v["runs"]["candidate"][0],
        inferbench_core::canonical::sha256_id(&ev)
    );
    let ids: Vec<&str> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for id in [
        "serialization.contract",
        "workload.lengths",
        "load.delivered",
        "latency.ttft.p95",
        "latency.request.p99",
        "goodput.attainment",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("**Verdict: PASS**"), "{md}");
    assert!(
        md.contains("## Preconditions") && md.contains("## Performance"),
        "{md}"
    );
    assert!(md.contains("`goodput.attainment`"), "{md}");
}

#[test]
fn ten_percent_injected_errors_fail_the_goodput_rule() {
    let run_dir = demo_run("gate-errors", &["--sim-error-rate", "10"]);
    let out = tmpdir("gate-errors-out");
    let j = out.join("v.json");
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        s(&run_dir),
        "--json",
        s(&j),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let v = read_json(&j);
    assert_eq!(v["verdict"], "FAIL");
    let goodput = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "goodput.attainment")
        .unwrap();
    assert_eq!(goodput["verdict"], "FAIL", "{goodput}");
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.contains("FAIL") && l.contains("goodput.attainment")),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_ledger_run_named_by_cid_gets_the_same_verdict_and_it_is_recorded() {
    let l = tmpdir("gate-ledger");
    let ledger = l.join("ledger");
    assert!(run(&["ledger", "init", s(&ledger)]).status.success());
    let o = run(&["ledger", "--ledger", s(&ledger), "add", s(&clean())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cid = stdout(&o)
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .expect("a cid in the add output")
        .trim_end_matches([',', ')'])
        .to_string();
    let (by_dir, by_cid) = (l.join("dir.json"), l.join("cid.json"));
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        s(&clean()),
        "--json",
        s(&by_dir),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        &cid,
        "--ledger",
        s(&ledger),
        "--json",
        s(&by_cid),
        "--by",
        "reviewer",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("recorded: gate.verdict"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read(&by_dir).unwrap(),
        std::fs::read(&by_cid).unwrap()
    );
    // The packet directory named as a path, without the ledger: the same verdict again.
    let packet = std::fs::read_dir(ledger.join("packets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("sha256-")
        })
        .unwrap();
    let by_path = l.join("path.json");
    let o = run(&[
        "gate",
        "--spec",
        s(&example()),
        s(&packet),
        "--json",
        s(&by_path),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&by_dir).unwrap(),
        std::fs::read(&by_path).unwrap()
    );
    let log = stdout(&run(&["ledger", "--ledger", s(&ledger), "log"]));
    assert!(log.contains("gate.verdict"), "{log}");
    let o = run(&["ledger", "--ledger", s(&ledger), "verify"]);
    assert!(o.status.success(), "{}", stdout(&o));
    let lines = std::fs::read_to_string(ledger.join("ledger.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "gate.verdict");
    assert_eq!(last["by"], "reviewer");
    assert_eq!(last["body"]["verdict"], "PASS");
    // The entry holds the verdict document itself: its canonical digest is the file's.
    let digest = |v: &serde_json::Value| inferbench_core::canonical::digest(v).unwrap();
    assert_eq!(
        digest(&last["body"]["document"]),
        digest(&read_json(&by_cid))
    );
    assert_eq!(last["body"]["verdict_digest"], digest(&read_json(&by_cid)));
}

#[test]
fn bad_specs_are_one_line_naming_file_line_and_field_and_record_nothing() {
    let l = tmpdir("gate-bad");
    let ledger = l.join("ledger");
    assert!(run(&["ledger", "init", s(&ledger)]).status.success());
    let before = std::fs::read(ledger.join("ledger.jsonl")).unwrap();
    let cases = [
        (
            "[gate]\nname = \"g\"\n[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"ttft\"\nstat = \"p99\"\nlimit = 1\nunit = \"ms\"\n",
            ":6: rule \"x\" metric: unknown metric \"ttft\"",
        ),
        (
            "[gate]\nname = \"g\"\n[[rule]]\nid = \"x\"\nfamily = \"speed\"\n",
            ":5: rule 1 family: unknown family \"speed\"",
        ),
        (
            "[gate]\nname = \"g\"\n[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"request_latency\"\nstat = \"p99\"\nlimit = 1\n",
            ":8: rule \"x\" limit: a bound without a unit",
        ),
        (
            "[gate]\nname = \"g\"\n[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"request_latency\"\nstat = \"p99\"\nlimit = 1\nunit = \"hours\"\n",
            ":9: rule \"x\" unit: unknown unit \"hours\"",
        ),
        (
            "[gate]\nname = \"g\"\ndefinition_set = \"genai-perf-9\"\n",
            ":3: [gate] definition_set: unknown definition set \"genai-perf-9\"",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let spec = l.join(format!("bad{i}.toml"));
        std::fs::write(&spec, text).unwrap();
        let o = run(&[
            "gate",
            "--spec",
            s(&spec),
            s(&clean()),
            "--ledger",
            s(&ledger),
        ]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(
            e.contains(&format!("{}{want}", spec.display())),
            "{e}\nwanted {want}"
        );
    }
    // A named epoch without a ledger to resolve it in.
    let spec = l.join("epoch.toml");
    std::fs::write(
        &spec,
        std::fs::read_to_string(example())
            .unwrap()
            .replace("version = 1\n", "version = 1\nepoch = \"e-1\"\n"),
    )
    .unwrap();
    let o = run(&["gate", "--spec", s(&spec), s(&clean())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --ledger DIR"), "{}", stderr(&o));
    let o = run(&[
        "gate",
        "--spec",
        s(&spec),
        s(&clean()),
        "--ledger",
        s(&ledger),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no epoch \"e-1\""), "{}", stderr(&o));
    assert_eq!(std::fs::read(ledger.join("ledger.jsonl")).unwrap(), before);
}
