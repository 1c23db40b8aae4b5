//! `--tokenizer-revision` end to end: checked against a Hugging Face cache snapshot laid out
//! in the test (never fetched), recorded in the manifest and the run's identity; a snapshot of
//! another commit is refused before any request.

use std::path::{Path, PathBuf};

use crate::common::{read_json, run, stderr, tmpdir};

const COMMIT: &str = "1111111111111111111111111111111111111111";
const OTHER: &str = "2222222222222222222222222222222222222222";

/// `models--org--tiny/snapshots/{COMMIT,OTHER}/tokenizer.json` (the workload crate's fixture
/// tokenizer), with `refs/main` naming COMMIT.
fn cache(dir: &Path) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-workload/tests/data/tokenizer/tokenizer.json");
    let repo = dir.join("hub/models--org--tiny");
    for c in [COMMIT, OTHER] {
        let snap = repo.join("snapshots").join(c);
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::copy(&fixture, snap.join("tokenizer.json")).unwrap();
    }
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), COMMIT).unwrap();
    repo
}

fn profile(tokenizer: &Path, revision: &str, out: &Path) -> std::process::Output {
    run(&[
        "profile",
        "--tokenizer",
        tokenizer.to_str().unwrap(),
        "--tokenizer-revision",
        revision,
        "--isl",
        "16",
        "--osl",
        "4",
        "--request-count",
        "2",
        "--ui",
        "none",
        "--artifact-dir",
        out.to_str().unwrap(),
    ])
}

#[test]
fn the_revision_is_checked_against_the_snapshot_and_recorded() {
    let dir = tmpdir("tokenizer-revision");
    let repo = cache(&dir);
    let good = repo.join("snapshots").join(COMMIT).join("tokenizer.json");
    let out = dir.join("run");
    let o = profile(&good, "main", &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = read_json(&out.join("inferbench_manifest.json"));
    assert_eq!(m["plan"]["tokenizer_revision"], "main");
    assert_eq!(
        m["tokenizer"]["revision"],
        serde_json::json!({"requested": "main", "commit": COMMIT})
    );
    let schema = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");

    // The snapshot of another commit: refused by name before the run, no run directory.
    let wrong = repo.join("snapshots").join(OTHER).join("tokenizer.json");
    let bad_out = dir.join("bad");
    let o = profile(&wrong, "main", &bad_out);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!(
            "--tokenizer-revision main: the tokenizer at {} is snapshot {OTHER}, not revision main",
            wrong.display()
        )),
        "{e}"
    );
    assert!(!bad_out.join("inferbench_manifest.json").exists());
    // The builtin tokenizer has no revision to check.
    let o = run(&[
        "profile",
        "--tokenizer-revision",
        "main",
        "--request-count",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the builtin tokenizer"),
        "{}",
        stderr(&o)
    );
}
