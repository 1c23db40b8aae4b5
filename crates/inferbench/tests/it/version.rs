//! `--version` names the version, the commit and the build profile, and every manifest
//! records the same build.

use std::process::Command;

use crate::common::{read_json, run, stderr, tmpdir};

/// "0.1.0 (commit C, P build)" → (C, P).
fn parse_version_line(line: &str) -> (String, String) {
    let rest = line
        .strip_prefix(&format!(
            "inferbench {} (commit ",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap_or_else(|| panic!("unexpected --version line {line:?}"));
    let (commit, rest) = rest.split_once(", ").expect("commit, profile");
    let profile = rest.strip_suffix(" build)").expect("ends with ' build)'");
    (commit.to_string(), profile.to_string())
}

#[test]
fn version_names_the_commit_and_profile_and_the_manifest_agrees() {
    let o = run(&["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let (commit, profile) = parse_version_line(&line);
    // Tests run the test profile's binary, under target/debug.
    assert_eq!(profile, "debug", "{line}");
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        // Built in a checkout: the commit is HEAD's (the build script reruns when HEAD moves).
        Some(h) => assert_eq!(commit, h, "{line}"),
        None => assert_eq!(commit, "unknown", "{line}"),
    }

    let dir = tmpdir("version");
    let o = run(&[
        "profile",
        "--request-count",
        "2",
        "--concurrency",
        "1",
        "--osl",
        "4",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["tool"]["commit"], commit.as_str());
    assert_eq!(m["tool"]["build_profile"], "debug");
}
