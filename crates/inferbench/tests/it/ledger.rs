//! `inferbench ledger …` end to end: runs against the simulated server become packets and
//! entries; an epoch is declared and a baseline pinned; tampering anywhere fails `verify`;
//! a GenAI-Perf fixture is imported with its files byte for byte; a git merge of two
//! branches that both appended is resolved by `ledger merge`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{read_json, run, stderr, tmpdir};
use serde_json::Value;

/// A declaration every add carries: context, outside the fingerprint.
const DECLARES: &[&str] = &["--declare", "note.purpose=ci"];

fn profile(dir: &Path, seed: &str, extra: &[&str]) {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "10",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "4",
        "--random-seed",
        seed,
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn ledger(l: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["ledger", "--ledger", l.to_str().unwrap(), "--by", "tester"];
    a.extend_from_slice(args);
    run(&a)
}

fn ok(l: &Path, args: &[&str]) -> String {
    let o = ledger(l, args);
    assert!(o.status.success(), "ledger {args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// Exit 2 with `want` in the one-line error.
fn refused(o: &std::process::Output, want: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(want), "want {want}: {}", stderr(o));
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

/// A ledger with one run added (with the declarations).
fn with_one_run(name: &str) -> (PathBuf, PathBuf, Value) {
    let root = tmpdir(name);
    let (run_dir, l) = (root.join("run"), root.join("ledger"));
    profile(&run_dir, "5", &[]);
    ok(&l, &["init"]);
    let mut args = vec!["add", run_dir.to_str().unwrap()];
    args.extend_from_slice(DECLARES);
    ok(&l, &args);
    let e = entries(&l).pop().unwrap();
    (root, l, e)
}

#[test]
fn add_epoch_pin_show_log_verify() {
    let (root, l, rec) = with_one_run("round-trip");
    assert_eq!(rec["kind"], "run.record");
    assert_eq!(rec["seq"], 2);
    let body = &rec["body"];
    assert_eq!(body["definition_set"], "aiperf-0.13");
    assert_eq!(body["profile"], "regression");
    assert_eq!(body["harness"]["tool"], "inferbench");
    assert!(body["grade"]["metrics"].as_object().unwrap().len() > 5);
    // The packet: every file listed with its digest, the evidence compressed and intact.
    let p = packet(&l, &rec);
    let m = read_json(&p.join("manifest.json"));
    let listed: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    // The run's manifest and the files a reader of the packet as a run needs (docs/ledger.md).
    assert_eq!(
        listed,
        [
            "grade.json",
            "records.jsonl.zst",
            "run/inferbench_client_resources.json",
            "run/inputs.json",
            "run/profile_export_aiperf.json",
            "run_manifest.json",
            "summary.json"
        ]
    );
    assert_eq!(
        std::fs::read(p.join("run_manifest.json")).unwrap(),
        std::fs::read(root.join("run/inferbench_manifest.json")).unwrap(),
        "the run's manifest, byte for byte"
    );
    assert_eq!(m["fingerprint"], body["fingerprint"]);
    let original = std::fs::read(root.join("run/inferbench_evidence.jsonl")).unwrap();
    let unpacked = zstd_decode(&p.join("records.jsonl.zst"));
    assert!(
        unpacked == original,
        "the evidence comes back byte for byte"
    );
    // Adding it again is refused, naming the entry that holds it.
    let run_path = root.join("run");
    let mut again = vec!["add", run_path.to_str().unwrap()];
    again.extend_from_slice(DECLARES);
    let o = ledger(&l, &again);
    refused(&o, "is already in the ledger: line 2");

    let cid = rec["cid"].as_str().unwrap();
    let out = ok(
        &l,
        &[
            "epoch", "declare", "--name", "e-sim", "--from", cid, "--reason", "first",
        ],
    );
    assert!(out.contains("decision: new-epoch"), "{out}");
    let toml_text = std::fs::read_to_string(l.join("epochs/e-sim.toml")).unwrap();
    assert!(
        toml_text.contains("decision = \"new-epoch\""),
        "{toml_text}"
    );
    let ep = entries(&l).pop().unwrap();
    assert_eq!(ep["body"]["fingerprint"], body["fingerprint"]);
    assert_eq!(ep["body"]["pins"]["contract"]["profile"], "regression");
    // Every pin of a simulated run is measured: it is a `reference` and pins as it is.
    assert_eq!(body["grade"]["overall"], "reference");
    // A run whose weights are named by a word, not a commit, is `comparable`: pinning it
    // needs the flag, and the refusal says why.
    let word = root.join("run-word");
    profile(&word, "5", &["--declare", "model_revision=main"]);
    let mut args = vec!["add", word.to_str().unwrap()];
    args.extend_from_slice(DECLARES);
    ok(&l, &args);
    let word_rec = entries(&l).pop().unwrap();
    assert_eq!(word_rec["body"]["grade"]["overall"], "comparable");
    assert_eq!(word_rec["body"]["fingerprint"], body["fingerprint"]);
    let word_cid = word_rec["cid"].as_str().unwrap();
    let o = ledger(&l, &["baseline", "pin", "--epoch", "e-sim", word_cid]);
    refused(
        &o,
        "graded comparable, not reference (model_revision declared without a digest",
    );
    ok(
        &l,
        &[
            "baseline",
            "pin",
            "--epoch",
            "e-sim",
            word_cid,
            "--allow-comparable",
            "--purpose",
            "context",
        ],
    );
    assert_eq!(entries(&l).pop().unwrap()["body"]["allow_comparable"], true);
    ok(
        &l,
        &[
            "baseline",
            "pin",
            "--epoch",
            "e-sim",
            cid,
            "--purpose",
            "ci",
        ],
    );
    let pin = entries(&l).pop().unwrap();
    assert_eq!(pin["kind"], "baseline.pin");
    assert_eq!(pin["body"]["allow_comparable"], false);
    assert_eq!(pin["body"]["purpose"], "ci");
    assert_eq!(pin["body"]["runs"][0], cid);
    assert_eq!(pin["body"]["epoch_cid"], ep["cid"]);
    // The seed's decisions against the pinned baseline, by a short cid.
    let d = ok(&l, &["decide", &cid[7..19]]);
    assert!(d.contains("against pinned baseline run"), "{d}");
    assert!(d.contains("decision: keep-legacy"), "{d}");
    // Same contract, another system under test (the run declared its image): compare.
    let digest = format!("image_digest=sha256:{}", "ab".repeat(32));
    let same = root.join("run-image");
    profile(&same, "5", &["--declare", &digest]);
    let mut args = vec!["add", same.to_str().unwrap()];
    args.extend_from_slice(DECLARES);
    ok(&l, &args);
    let sut = entries(&l).pop().unwrap();
    assert_eq!(
        sut["body"]["fingerprint"], body["fingerprint"],
        "a SUT pin is not in the fingerprint"
    );
    let d = ok(&l, &["decide", sut["cid"].as_str().unwrap()]);
    assert!(d.contains("decision: compare"), "{d}");
    assert!(
        d.lines().any(
            |l| l.starts_with("  image_digest [Sut/deployment]: \"sha256:")
                && l.ends_with(&format!("-> \"sha256:{}\"", "ab".repeat(32)))
        ),
        "{d}"
    );
    // Another workload (another seed): a new epoch, with the pins that decided.
    let other = root.join("run-seed6");
    profile(&other, "6", &[]);
    let mut args = vec!["add", other.to_str().unwrap()];
    args.extend_from_slice(DECLARES);
    ok(&l, &args);
    let new = entries(&l).pop().unwrap();
    assert_ne!(new["body"]["fingerprint"], body["fingerprint"]);
    let d = ok(
        &l,
        &["decide", new["cid"].as_str().unwrap(), "--against", "e-sim"],
    );
    assert!(d.contains("decision: new-epoch"), "{d}");
    assert!(
        d.contains("  random_seed [Contract/arrival]: 5 -> 6"),
        "{d}"
    );
    // Pinning it to e-sim is refused, naming the differing pins.
    let o = ledger(
        &l,
        &[
            "baseline",
            "pin",
            "--epoch",
            "e-sim",
            new["cid"].as_str().unwrap(),
            "--allow-comparable",
        ],
    );
    refused(&o, "contract pins differ: workload_digest");
    let out = ok(
        &l,
        &[
            "epoch",
            "declare",
            "--name",
            "e-seed6",
            "--from",
            new["cid"].as_str().unwrap(),
            "--parent",
            "e-sim",
        ],
    );
    assert!(
        out.contains("decision: new-epoch (the contract changed: workload_digest"),
        "{out}"
    );
    let show = ok(&l, &["show"]);
    assert!(show.contains("baseline: sha256:"), "{show}");
    assert!(show.contains("e-seed6: new-epoch (parent e-sim)"), "{show}");
    let show = ok(&l, &["show"]);
    assert!(show.contains("e-sim: new-epoch"), "{show}");
    assert!(
        show.contains(&format!("{} line 2 run.record epoch e-sim", &cid[..19])),
        "{show}"
    );
    let log = ok(&l, &["log"]);
    assert_eq!(log.lines().count(), entries(&l).len());
    assert!(log.lines().nth(1).unwrap().contains("run.record"), "{log}");
    let v = ok(&l, &["verify"]);
    assert!(v.starts_with("ok: "), "{v}");
}

fn zstd_decode(p: &Path) -> Vec<u8> {
    let bytes = std::fs::read(p).unwrap();
    assert_eq!(&bytes[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut inferbench_ledger::packet::open_records(p).unwrap(),
        &mut out,
    )
    .unwrap();
    out
}

#[test]
fn a_declaration_changes_the_fingerprint_and_is_recorded() {
    let (root, l, rec) = with_one_run("declare");
    let run_dir = root.join("run2");
    profile(&run_dir, "5", &[]);
    // A declaration is recorded with its provenance; context stays out of the fingerprint.
    ok(
        &l,
        &[
            "add",
            run_dir.to_str().unwrap(),
            "--declare",
            "note.ticket=OPS-1",
        ],
    );
    let rec2 = entries(&l).pop().unwrap();
    assert_eq!(rec2["body"]["fingerprint"], rec["body"]["fingerprint"]);
    let id = read_json(&packet(&l, &rec2).join("manifest.json"))["identity"].clone();
    assert_eq!(id["pins"]["note.ticket"]["value"], "OPS-1");
    assert_eq!(id["pins"]["note.ticket"]["from"], "declared");
    assert_eq!(id["pins"]["note.ticket"]["route"], "--declare");
    let declared = rec2["body"]["declared"].as_array().unwrap();
    assert!(declared.iter().any(|d| d == "note.ticket"), "{declared:?}");
    // A declaration that contradicts what the run measured is refused, naming both.
    let n = entries(&l).len();
    let o = ledger(
        &l,
        &[
            "add",
            run_dir.to_str().unwrap(),
            "--declare",
            "profile=service-load",
        ],
    );
    refused(
        &o,
        "'profile' declared as \"service-load\" but the run measured \"regression\"",
    );
    assert_eq!(entries(&l).len(), n);
    // An unknown or measured-only key is refused, naming it; nothing is appended.
    let n = entries(&l).len();
    let o = ledger(
        &l,
        &[
            "add",
            run_dir.to_str().unwrap(),
            "--declare",
            "workload_digest=x",
        ],
    );
    refused(&o, "'workload_digest' is measured");
    assert_eq!(entries(&l).len(), n);
}

#[test]
fn tampering_anywhere_fails_verify_naming_where() {
    let (_root, l, rec) = with_one_run("tamper");
    let p = packet(&l, &rec);
    let pname = p.file_name().unwrap().to_string_lossy().into_owned();
    let flip = |f: &Path, at: usize| {
        let mut b = std::fs::read(f).unwrap();
        let i = at.min(b.len() - 1);
        b[i] ^= 0x01;
        std::fs::write(f, b).unwrap();
    };
    let cases: Vec<(PathBuf, usize, String)> = vec![
        (
            p.join("summary.json"),
            40,
            format!("packet {pname}: summary.json: sha256"),
        ),
        (
            p.join("records.jsonl.zst"),
            100,
            format!("packet {pname}: records.jsonl.zst: sha256"),
        ),
        (
            p.join("grade.json"),
            10,
            format!("packet {pname}: grade.json: sha256"),
        ),
        (
            p.join("manifest.json"),
            30,
            format!("packet {pname}: manifest.json: digest"),
        ),
    ];
    for (f, at, want) in cases {
        let keep = std::fs::read(&f).unwrap();
        flip(&f, at);
        let o = ledger(&l, &["verify"]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{}: {out}", f.display());
        assert!(out.contains(&want), "want {want}: {out}");
        std::fs::write(&f, keep).unwrap();
    }
    // A body value and a prev link in ledger.jsonl.
    let text = std::fs::read_to_string(l.join("ledger.jsonl")).unwrap();
    let bad_body = text.replace(r#""profile":"regression""#, r#""profile":"regressioN""#);
    // One hex digit of line 2's prev flipped: still a well-formed id, the wrong one.
    let field = format!(r#""prev":"{}""#, rec["prev"].as_str().unwrap());
    let at = text.find(&field).unwrap() + 20;
    let mut b = text.clone().into_bytes();
    b[at] = if b[at] == b'0' { b'1' } else { b'0' };
    let bad_prev = String::from_utf8(b).unwrap();
    for (bad, want) in [(bad_body, "line 2: cid:"), (bad_prev, "line 2: prev:")] {
        assert_ne!(bad, text);
        std::fs::write(l.join("ledger.jsonl"), &bad).unwrap();
        let o = ledger(&l, &["verify"]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(out.contains(want), "want {want}: {out}");
    }
    std::fs::write(l.join("ledger.jsonl"), &text).unwrap();
    // The evidence blob absent (kept outside git, say) is a note, not corruption.
    std::fs::remove_file(p.join("records.jsonl.zst")).unwrap();
    let o = ledger(&l, &["verify"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("evidence absent"), "{out}");
}

fn files_under(dir: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
    let mut es: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    es.sort_by_key(|e| e.file_name());
    for e in es {
        let r = format!("{rel}{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            files_under(&e.path(), &format!("{r}/"), out);
        } else {
            out.push((r, std::fs::read(e.path()).unwrap()));
        }
    }
}

#[test]
fn import_keeps_the_originals_and_records_what_is_missing() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-import/tests/data/genai_perf/G12-chat-stream");
    let l = tmpdir("import").join("ledger");
    ok(&l, &["init"]);
    let out = ok(&l, &["import", fixture.to_str().unwrap()]);
    assert!(out.contains("run.import"), "{out}");
    let e = entries(&l).pop().unwrap();
    assert_eq!(e["kind"], "run.import");
    let b = &e["body"];
    assert_eq!(b["source"]["tool"], "genai-perf");
    assert!(
        b["importer"]
            .as_str()
            .unwrap()
            .starts_with("inferbench-import-genai-perf/")
    );
    let missing = b["missing"].as_object().unwrap();
    for pin in ["image_digest", "model_revision", "gpu_inventory"] {
        assert!(
            missing.contains_key(pin),
            "{pin} not listed missing: {missing:?}"
        );
    }
    assert!(!b["grade"]["metrics"].as_object().unwrap().is_empty());
    let mut want = Vec::new();
    files_under(&fixture, "", &mut want);
    let mut got = Vec::new();
    files_under(&packet(&l, &e).join("import"), "", &mut got);
    assert_eq!(
        want.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        got.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    for ((n, a), (_, b2)) in want.iter().zip(&got) {
        assert!(a == b2, "{n} differs from the original");
    }
    // Every original is listed among the entry's artifact digests.
    let arts = b["source"]["artifacts"].as_array().unwrap();
    assert_eq!(arts.len(), want.len());
    assert!(ok(&l, &["verify"]).starts_with("ok: "));
    // A run of ours is not imported, and an import is not added.
    let o = ledger(&l, &["add", fixture.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("use `inferbench ledger import"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn repeated_runs_add_each_run() {
    let root = tmpdir("repeated");
    let (run_dir, l) = (root.join("runs"), root.join("ledger"));
    profile(&run_dir, "3", &["--num-profile-runs", "2"]);
    ok(&l, &["init"]);
    let out = ok(&l, &["add", run_dir.to_str().unwrap()]);
    assert_eq!(out.lines().count(), 2, "{out}");
    let es = entries(&l);
    assert_eq!(es.len(), 3);
    assert_ne!(es[1]["body"]["packet"], es[2]["body"]["packet"]);
}

#[test]
fn bad_input_is_one_line_naming_the_thing() {
    let (root, l, _) = with_one_run("bad-input");
    let one_line = |o: &std::process::Output, want: &str| {
        let e = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(want), "want {want}: {e}");
    };
    let n = entries(&l).len();
    // A run directory missing its evidence is named as ours, not taken for an import.
    let lost = root.join("lost");
    profile(&lost, "5", &[]);
    std::fs::remove_file(lost.join("inferbench_evidence.jsonl")).unwrap();
    one_line(
        &ledger(&l, &["add", lost.to_str().unwrap()]),
        "inferbench_evidence.jsonl is missing",
    );
    // A run directory missing a file.
    std::fs::remove_file(root.join("run/inferbench_manifest.json")).unwrap();
    one_line(
        &ledger(&l, &["add", root.join("run").to_str().unwrap()]),
        "inferbench_manifest.json",
    );
    one_line(
        &ledger(&l, &["decide", "sha256:0123456789ab"]),
        "unknown cid 'sha256:0123456789ab'",
    );
    one_line(
        &ledger(
            &l,
            &["epoch", "declare", "--name", "x", "--from", "deadbeef00"],
        ),
        "unknown cid",
    );
    one_line(
        &ledger(&l, &["baseline", "pin", "--epoch", "nope", "deadbeef00"]),
        "unknown epoch 'nope'",
    );
    assert_eq!(entries(&l).len(), n, "nothing appended");
    // A ledger from a newer format.
    let text = std::fs::read_to_string(l.join("ledger.jsonl")).unwrap();
    let first = text.lines().next().unwrap().replace(r#""v":1"#, r#""v":2"#);
    std::fs::write(l.join("ledger.jsonl"), format!("{text}{first}\n")).unwrap();
    one_line(
        &ledger(&l, &["log"]),
        &format!("line {}: v: format version 2 is newer", n + 1),
    );
    one_line(&ledger(&l, &["init", l.to_str().unwrap()]), "already here");
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git")
}

#[test]
fn a_git_merge_of_two_appending_branches_is_resolved() {
    let (root, l, _) = with_one_run("git-merge");
    if Command::new("git").arg("--version").output().is_err() {
        return; // no git here: the library tests cover the merge itself
    }
    assert!(git(&l, &["init", "-q"]).status.success());
    git(&l, &["add", "-A"]);
    assert!(git(&l, &["commit", "-qm", "base"]).status.success());
    git(&l, &["checkout", "-qb", "other"]);
    let r2 = root.join("run2");
    profile(&r2, "6", &[]);
    ok(&l, &["add", r2.to_str().unwrap()]);
    git(&l, &["add", "-A"]);
    git(&l, &["commit", "-qm", "theirs"]);
    git(&l, &["checkout", "-q", "main"]);
    let r3 = root.join("run3");
    profile(&r3, "7", &[]);
    ok(&l, &["add", r3.to_str().unwrap()]);
    git(&l, &["add", "-A"]);
    git(&l, &["commit", "-qm", "ours"]);
    let m = git(&l, &["merge", "-q", "other"]);
    assert!(
        !m.status.success(),
        "both appended: git must refuse to auto-merge"
    );
    let text = std::fs::read_to_string(l.join("ledger.jsonl")).unwrap();
    assert!(text.contains("<<<<<<<"), "{text}");
    assert_eq!(ledger(&l, &["verify"]).status.code(), Some(1));
    let out = ok(&l, &["merge"]);
    assert!(out.contains("2 common entries kept, 2 re-linked"), "{out}");
    let v = ok(&l, &["verify"]);
    assert!(v.starts_with("ok: 4 entries, 3 packets"), "{v}");
    git(&l, &["add", "-A"]);
    assert!(git(&l, &["commit", "-qm", "merged"]).status.success());
}
