//! A file dataset's inline `records:` (AIPerf: "the same shape as one line of the
//! equivalent JSONL file"), written as that file so the dataset loaders read them as they
//! read any file: one JSON object per line. A `random_pool` dict of lists is a directory
//! of pools, one `NAME.jsonl` each, as AIPerf's directory mode.
//!
//! The file is named by the SHA-256 of its content, in inferbench's cache directory
//! (`$XDG_CACHE_HOME/inferbench/inline/`, the system's temporary directory when there is no
//! cache directory): the same records give the same path (so the manifest's input hash is
//! stable across runs), a concurrent run never sees a half-written file, and a run leaves
//! nothing in `/tmp`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::part::Part;

/// Writes `records` (the value at `d.records`) and returns the path for `--input-file`.
pub(super) fn write_records(d: &Part<'_>, records: &Value, format: &str) -> Result<String, String> {
    let err = |e: std::io::Error, p: &Path| {
        d.err("records", format!("cannot write {}: {e}", p.display()))
    };
    match records {
        Value::Array(items) => {
            let text = jsonl(d, "records", items)?;
            let path = content_path(&[("", &text)], "jsonl");
            write_once(&path, text.as_bytes()).map_err(|e| err(e, &path))?;
            Ok(path.display().to_string())
        }
        Value::Object(pools) if format == "random_pool" => {
            let mut files = Vec::new();
            for (name, items) in pools {
                let Some(items) = items.as_array() else {
                    return Err(d.err(&format!("records.{name}"), "expected a list of records"));
                };
                if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                    return Err(d.err(
                        &format!("records.{name}"),
                        "not a pool name (it becomes a file name)",
                    ));
                }
                files.push((name.clone(), jsonl(d, &format!("records.{name}"), items)?));
            }
            let refs: Vec<(&str, &String)> = files.iter().map(|(n, t)| (n.as_str(), t)).collect();
            let dir = content_path(&refs, "pools");
            if !dir.is_dir() {
                let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
                std::fs::create_dir_all(&tmp).map_err(|e| err(e, &tmp))?;
                for (name, text) in &files {
                    let f = tmp.join(format!("{name}.jsonl"));
                    std::fs::write(&f, text).map_err(|e| err(e, &f))?;
                }
                if std::fs::rename(&tmp, &dir).is_err() && !dir.is_dir() {
                    return Err(d.err("records", format!("cannot write {}", dir.display())));
                }
                let _ = std::fs::remove_dir_all(&tmp);
            }
            Ok(dir.display().to_string())
        }
        Value::Object(_) => Err(d.err(
            "records",
            format!("a table of record lists is random_pool's form; format {format} takes a list"),
        )),
        other => Err(d.refuse("records", other)),
    }
}

/// One JSON object per line, each record as written in the file (its keys in order).
fn jsonl(d: &Part<'_>, at: &str, items: &[Value]) -> Result<String, String> {
    let mut text = String::new();
    for (i, r) in items.iter().enumerate() {
        if !r.is_object() {
            return Err(d.err(&format!("{at}[{i}]"), "a record is a table"));
        }
        text.push_str(&r.to_string());
        text.push('\n');
    }
    if items.is_empty() {
        return Err(d.err(at, "no records"));
    }
    Ok(text)
}

/// `<cache>/inline/inferbench-inline-<first 16 hex of the SHA-256>.<ext>`.
fn content_path(parts: &[(&str, &String)], ext: &str) -> PathBuf {
    let mut h = Sha256::new();
    for (name, text) in parts {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.update([0]);
    }
    let hex = hex::encode(h.finalize());
    inline_dir().join(format!("inferbench-inline-{}.{ext}", &hex[..16]))
}

/// The cache's `inline/` (created), else the temporary directory.
fn inline_dir() -> PathBuf {
    inferbench_run::cache_dir()
        .map(|d| d.join("inline"))
        .filter(|d| std::fs::create_dir_all(d).is_ok())
        .unwrap_or_else(std::env::temp_dir)
}

/// Writes `bytes` to `path` unless it is already there (same name, same content): through
/// a temporary name and a rename, so a reader never sees part of it.
fn write_once(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|b| b == bytes) {
        return Ok(());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
