//! `--tokenizer-revision`: the revision a tokenizer must be, checked against what its local
//! files record, never fetched (docs/workload.md, "Tokenizer revision").
//!
//! Only a Hugging Face hub cache records revisions: a snapshot directory
//! `models--ORG--NAME/snapshots/<commit>/` holds the files of one commit, and
//! `models--ORG--NAME/refs/<name>` holds the commit a branch or tag named when it was
//! downloaded. A revision is resolved as AIPerf resolves it in that cache: a ref file first,
//! else the revision itself as a commit; the tokenizer's own snapshot must be that commit.

use std::path::{Path, PathBuf};

pub use inferbench_core::manifest::TokenizerRevision;

/// Checks that the tokenizer at `tokenizer_path` (a `tokenizer.json` or its directory) is
/// revision `requested`. The error is one line for the `--tokenizer-revision` flag.
pub fn check_revision(tokenizer_path: &str, requested: &str) -> Result<TokenizerRevision, String> {
    let flag = format!("--tokenizer-revision {requested}");
    if requested.is_empty()
        || requested.contains(['/', '\\'])
        || requested == "."
        || requested == ".."
    {
        return Err(format!(
            "{flag}: not a revision name (a branch, tag or commit hash)"
        ));
    }
    let (repo, commit) = snapshot_of(Path::new(tokenizer_path)).ok_or_else(|| {
        format!(
            "{flag}: {tokenizer_path} is not in a Hugging Face cache snapshot (models--ORG--NAME/snapshots/COMMIT/), so nothing records its revision; inferbench never downloads: point --tokenizer at the snapshot's files, or leave the flag out"
        )
    })?;
    let ref_file = repo.join("refs").join(requested);
    let resolved = match std::fs::read_to_string(&ref_file) {
        Ok(text) => text.trim().to_string(),
        Err(_) => requested.to_string(),
    };
    if resolved != commit {
        let via = if resolved == requested {
            String::new()
        } else {
            format!(" ({} points at {resolved})", ref_file.display())
        };
        return Err(format!(
            "{flag}: the tokenizer at {tokenizer_path} is snapshot {commit}, not revision {requested}{via}"
        ));
    }
    Ok(TokenizerRevision {
        requested: requested.to_string(),
        commit,
    })
}

/// The cache repository directory and the commit of the snapshot holding `path`.
fn snapshot_of(path: &Path) -> Option<(PathBuf, String)> {
    let dir = if path.is_dir() { path } else { path.parent()? };
    let commit = dir.file_name()?.to_str()?.to_string();
    let snapshots = dir.parent()?;
    let repo = snapshots.parent()?;
    let is_repo = repo
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("models--"));
    (snapshots.file_name()? == "snapshots" && is_repo).then(|| (repo.to_path_buf(), commit))
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "0123456789abcdef0123456789abcdef01234567";
    const C2: &str = "fedcba9876543210fedcba9876543210fedcba98";

    /// A hub cache with snapshots C1 and C2, `refs/main` = C2 and `refs/v1` = C1, in a fresh
    /// directory removed when the guard drops.
    fn cache(name: &str) -> tempfile::TempDir {
        let guard = tempfile::Builder::new()
            .prefix(&format!("ib-rev-{name}-"))
            .tempdir()
            .unwrap();
        let repo = guard.path().join("models--org--model");
        for c in [C1, C2] {
            std::fs::create_dir_all(repo.join("snapshots").join(c)).unwrap();
            std::fs::write(repo.join("snapshots").join(c).join("tokenizer.json"), "{}").unwrap();
        }
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), format!("{C2}\n")).unwrap();
        std::fs::write(repo.join("refs/v1"), C1).unwrap();
        guard
    }

    fn tok(root: &Path, commit: &str) -> String {
        root.join("models--org--model/snapshots")
            .join(commit)
            .join("tokenizer.json")
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_ref_or_a_commit_resolves_to_the_tokenizers_snapshot() {
        let guard = cache("ok");
        let root = guard.path();
        let want = |requested: &str, commit: &str| TokenizerRevision {
            requested: requested.into(),
            commit: commit.into(),
        };
        assert_eq!(check_revision(&tok(root, C2), "main"), Ok(want("main", C2)));
        assert_eq!(check_revision(&tok(root, C1), "v1"), Ok(want("v1", C1)));
        assert_eq!(check_revision(&tok(root, C1), C1), Ok(want(C1, C1)));
        // The snapshot directory itself works as well as its tokenizer.json.
        let dir = root.join("models--org--model/snapshots").join(C2);
        assert_eq!(
            check_revision(dir.to_str().unwrap(), "main"),
            Ok(want("main", C2))
        );
    }

    #[test]
    fn another_revision_is_refused_naming_both_commits() {
        let guard = cache("bad");
        let root = guard.path();
        let e = check_revision(&tok(root, C1), "main").unwrap_err();
        assert!(
            e.starts_with("--tokenizer-revision main: the tokenizer at "),
            "{e}"
        );
        assert!(
            e.contains(&format!("is snapshot {C1}, not revision main")),
            "{e}"
        );
        assert!(e.contains(&format!("refs/main points at {C2}")), "{e}");
        let e = check_revision(&tok(root, C2), C1).unwrap_err();
        assert!(
            e.ends_with(&format!("is snapshot {C2}, not revision {C1}")),
            "{e}"
        );
        // An unknown name is neither a ref nor this commit.
        let e = check_revision(&tok(root, C2), "v9").unwrap_err();
        assert!(e.ends_with("not revision v9"), "{e}");
    }

    #[test]
    fn outside_a_cache_or_with_a_path_like_revision_nothing_is_checked() {
        let guard = cache("plain");
        let root = guard.path();
        let plain = root.join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let e = check_revision(plain.to_str().unwrap(), "main").unwrap_err();
        assert!(e.contains("is not in a Hugging Face cache snapshot"), "{e}");
        for bad in ["", "../main", "a/b", ".."] {
            let e = check_revision(&tok(root, C2), bad).unwrap_err();
            assert!(e.contains("not a revision name"), "{bad}: {e}");
        }
    }
}
