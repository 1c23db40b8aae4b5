//! The executable's SHA-256 (the manifest's `tool.binary_sha256`), remembered between runs.
//!
//! Hashing a 50 MB release binary is about 27 ms of CPU (SHA-NI), 40 % of a run's start-up
//! and more than a hundred times that with debug info; every run of the same file gave the
//! same answer. So the answer is kept in `$XDG_CACHE_HOME/inferbench/binary-sha256`
//! (`~/.cache/...` without it), one line per file: its device, inode, size, modification
//! and status-change times (ns), then the hash. A line is used only when all five match
//! the file now; the status-change time cannot be set back by a user, and any write or
//! replacement changes it or the inode. The hash is stored only when the file did not
//! change while it was read. Without a writable cache the hash is computed every run, as
//! before; deleting the file is harmless.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Lines kept (one per executable seen, the most recent first).
const KEEP: usize = 16;

/// SHA-256 (hex) of `path`, from the cache when it knows this file.
pub fn binary_sha256(path: &Path) -> Option<String> {
    cached_sha256(path, cache_file().as_deref()).ok()
}

fn cache_file() -> Option<PathBuf> {
    Some(cache_dir()?.join("binary-sha256"))
}

/// inferbench's cache directory: `$XDG_CACHE_HOME/inferbench`, else
/// `$HOME/.cache/inferbench`; `None` when neither variable is set.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("inferbench"))
}

/// What identifies the file's present contents.
#[cfg(unix)]
fn stamp(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    Some(format!(
        "{}:{}:{}:{}.{:09}:{}.{:09}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    ))
}

#[cfg(not(unix))]
fn stamp(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

pub(crate) fn cached_sha256(path: &Path, cache: Option<&Path>) -> std::io::Result<String> {
    let key = stamp(&std::fs::metadata(path)?);
    let known = cache
        .and_then(|c| std::fs::read_to_string(c).ok())
        .unwrap_or_default();
    if let Some(k) = &key
        && let Some(hash) = known.lines().find_map(|l| {
            let (stamp, hash) = l.split_once(' ')?;
            let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
            (stamp == k && hex).then(|| hash.to_ascii_lowercase())
        })
    {
        return Ok(hash);
    }
    let hash = sha256_file(path)?;
    let unchanged = key.is_some() && stamp(&std::fs::metadata(path)?) == key;
    if let (true, Some(k), Some(c)) = (unchanged, &key, cache) {
        remember(c, k, &hash, &known);
    }
    Ok(hash)
}

/// Writes the cache with `stamp hash` first, then up to `KEEP - 1` other lines of `known`;
/// through a temporary file and a rename, so that concurrent runs never read half a file.
/// Failures are ignored: the cache only saves time.
fn remember(cache: &Path, stamp: &str, hash: &str, known: &str) {
    let mut text = format!("{stamp} {hash}\n");
    for l in known
        .lines()
        .filter(|l| l.split_once(' ').is_some_and(|(s, _)| s != stamp))
        .take(KEEP - 1)
    {
        text.push_str(l);
        text.push('\n');
    }
    let Some(dir) = cache.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".binary-sha256.{}.tmp", std::process::id()));
    // The temporary name is this process's own, so that concurrent runs never write one
    // file (the artifacts' `AtomicFile` has one fixed temporary name, and syncs, which a
    // cache does not need). A failed write or rename leaves no temporary behind.
    if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, cache).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// SHA-256 (hex) of a file, read in 256 KiB pieces.
pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    /// A fresh directory and its path; the directory is removed when the guard drops.
    fn dir(name: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::Builder::new()
            .prefix(&format!("ib-self-hash-{name}-"))
            .tempdir()
            .unwrap();
        let p = d.path().to_path_buf();
        (d, p)
    }

    #[test]
    fn a_file_is_hashed_across_read_pieces() {
        let (_tmp, d) = dir("pieces");
        let p = d.join("f");
        std::fs::write(&p, b"abc").unwrap();
        // FIPS 180-2's vectors: "abc", and one million 'a' (four 256 KiB pieces less a bit).
        assert_eq!(sha256_file(&p).unwrap(), ABC);
        std::fs::write(&p, vec![b'a'; 1_000_000]).unwrap();
        assert_eq!(
            sha256_file(&p).unwrap(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn the_cache_answers_for_the_same_file_and_not_for_a_changed_one() {
        let (_tmp, d) = dir("cache");
        let (p, cache) = (d.join("exe"), d.join("c").join("binary-sha256"));
        std::fs::write(&p, b"abc").unwrap();
        // First run: computed, and remembered.
        assert_eq!(cached_sha256(&p, Some(&cache)).unwrap(), ABC);
        let text = std::fs::read_to_string(&cache).unwrap();
        assert!(text.ends_with(&format!(" {ABC}\n")), "{text}");
        // The next run takes the cache's word: planting another hash for the same stamp
        // shows it is read, not recomputed.
        let planted = "0".repeat(64);
        let stamp = text.split_once(' ').unwrap().0.to_string();
        std::fs::write(&cache, format!("{stamp} {planted}\n")).unwrap();
        assert_eq!(cached_sha256(&p, Some(&cache)).unwrap(), planted);
        // A change of mode moves only the status-change time, and that is enough.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
            assert_eq!(cached_sha256(&p, Some(&cache)).unwrap(), ABC);
            let now = super::stamp(&std::fs::metadata(&p).unwrap()).unwrap();
            std::fs::write(&cache, format!("{now} {planted}\n")).unwrap();
        }
        // A rewrite changes the stamp (size here; the status-change time always): the hash
        // is computed again and replaces nothing but its own line.
        std::fs::write(&p, b"abcd").unwrap();
        let abcd = "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589";
        assert_eq!(cached_sha256(&p, Some(&cache)).unwrap(), abcd);
        let lines: Vec<String> = std::fs::read_to_string(&cache)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].ends_with(abcd) && lines[1].ends_with(&planted),
            "{lines:?}"
        );
    }

    #[test]
    fn a_bad_or_missing_cache_only_costs_the_hash() {
        let (_tmp, d) = dir("bad");
        let p = d.join("exe");
        std::fs::write(&p, b"abc").unwrap();
        // Garbage lines, a short hash for the right stamp, and a cache path that cannot be
        // created (its parent is a file).
        let cache = d.join("c");
        let stamp = stamp(&std::fs::metadata(&p).unwrap()).unwrap();
        std::fs::write(&cache, format!("garbage\n\n{stamp} abc\n{stamp}\n")).unwrap();
        assert_eq!(cached_sha256(&p, Some(&cache)).unwrap(), ABC);
        assert_eq!(cached_sha256(&p, Some(&cache.join("x"))).unwrap(), ABC);
        assert_eq!(cached_sha256(&p, None).unwrap(), ABC);
        assert!(cached_sha256(&d.join("missing"), Some(&cache)).is_err());
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_files() {
        let (_tmp, d) = dir("keep");
        let cache = d.join("binary-sha256");
        for i in 0..(KEEP + 5) {
            let p = d.join(format!("exe{i}"));
            std::fs::write(&p, format!("{i}")).unwrap();
            cached_sha256(&p, Some(&cache)).unwrap();
        }
        let text = std::fs::read_to_string(&cache).unwrap();
        assert_eq!(text.lines().count(), KEEP);
        // The most recent first.
        let last = d.join(format!("exe{}", KEEP + 4));
        assert!(text.starts_with(&stamp(&std::fs::metadata(&last).unwrap()).unwrap()));
    }
}
