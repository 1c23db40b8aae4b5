//! The git commit and build profile that `--version` prints and every manifest records.
//! Without a git checkout (a source archive), `INFERBENCH_GIT_COMMIT` from the environment,
//! else "unknown".

use std::path::Path;
use std::process::Command;

fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rerun-if-env-changed=INFERBENCH_GIT_COMMIT");
    let commit = std::env::var("INFERBENCH_GIT_COMMIT")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| git(&dir, &["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    // Rebuild when HEAD moves: HEAD itself (a worktree has its own) and the branch it names,
    // which lives in the common git directory (loose, or packed).
    if let Some(git_dir) = git(&dir, &["rev-parse", "--absolute-git-dir"]) {
        let common = git(
            &dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )
        .unwrap_or_else(|| git_dir.clone());
        let mut watch = vec![format!("{git_dir}/HEAD"), format!("{common}/packed-refs")];
        if let Some(r) = git(&dir, &["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{common}/{r}"));
        }
        // A path that does not exist would make cargo rerun this script on every build.
        for p in watch.iter().filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    // The profile's directory under target/ (debug, release, profiling, …): OUT_DIR is
    // target/[TRIPLE/]PROFILE/build/PKG-HASH/out.
    let profile = std::env::var("OUT_DIR")
        .ok()
        .and_then(|o| {
            Path::new(&o)
                .ancestors()
                .nth(3)
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=INFERBENCH_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=INFERBENCH_BUILD_PROFILE={profile}");
}
