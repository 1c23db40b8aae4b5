//! Content-addressed run packets, `packets/sha256-<hex>/`: `manifest.json` (canonical; every
//! other file with its sha256 and size, the run's identity and source), `summary.json`,
//! `records.jsonl.zst`, `grade.json`, and for imports `import/` with the original files
//! byte for byte. The packet id is the digest of the canonical `manifest.json`.
//!
//! A packet is written into a temp directory and renamed into place, so a packet directory
//! under its final name is always whole.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use inferbench_core::canonical;
use inferbench_core::evidence::{EVIDENCE_FILE, EvidenceLine};
use inferbench_run::Failure;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::source::Source;
use crate::store::Ledger;

pub const MANIFEST: &str = "manifest.json";
pub const SUMMARY: &str = "summary.json";
pub const RECORDS: &str = "records.jsonl.zst";
pub const GRADE: &str = "grade.json";
pub use inferbench_run::rundir::{
    PACKET_IMPORT as IMPORT_DIR, PACKET_RUN_FILES, PACKET_RUN_MANIFEST, PACKET_SCHEMA,
};
use inferbench_run::side_files::CLIENT_RESOURCES as CLIENT_RESOURCES_FILE;
const ZSTD_LEVEL: i32 = 3;

/// One file of a packet, as its manifest lists it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PacketFile {
    /// Relative to the packet directory, `/`-separated.
    pub path: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Clone, Debug)]
pub struct Packet {
    /// `sha256:<hex>` of the canonical manifest.
    pub id: String,
    pub dir: PathBuf,
    pub manifest: Value,
    /// False when an identical packet was already there (the content is the same).
    pub created: bool,
}

/// `packets/sha256-<hex>` for a packet id.
pub fn packet_dir(ledger: &Ledger, id: &str) -> PathBuf {
    ledger.packets().join(id.replacen(':', "-", 1))
}

fn io(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::run(format!("{}: {e}", path.display()))
}

/// A writer that hashes and counts what goes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    size: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn hashing(path: &Path) -> Result<Hashing<File>, Failure> {
    Ok(Hashing {
        inner: File::create(path).map_err(|e| io(path, e))?,
        hash: Sha256::new(),
        size: 0,
    })
}

fn finish_file(rel: &str, w: Hashing<File>, path: &Path) -> Result<PacketFile, Failure> {
    w.inner.sync_all().map_err(|e| io(path, e))?;
    Ok(PacketFile {
        path: rel.to_string(),
        sha256: format!("sha256:{}", hex::encode(w.hash.finalize())),
        size: w.size,
    })
}

fn write_canonical<T: Serialize>(dir: &Path, rel: &str, value: &T) -> Result<PacketFile, Failure> {
    let path = dir.join(rel);
    let bytes = canonical::to_vec(value).map_err(Failure::input)?;
    let mut w = hashing(&path)?;
    w.write_all(&bytes).map_err(|e| io(&path, e))?;
    finish_file(rel, w, &path)
}

/// Streams the evidence through the compressor: our run's file as it is on disk (read in
/// chunks, never whole); an import's records, a line at a time, in our evidence format.
fn write_records(dir: &Path, src: &Source) -> Result<(PacketFile, Value), Failure> {
    let path = dir.join(RECORDS);
    let w = hashing(&path)?;
    let mut enc = zstd::Encoder::new(w, ZSTD_LEVEL).map_err(|e| io(&path, e))?;
    let mut raw = Hashing {
        inner: &mut enc,
        hash: Sha256::new(),
        size: 0,
    };
    if src.loaded.imported.is_none() {
        // A compressed evidence file goes in decompressed: the packet (and its digest) is
        // the same whichever way the run stored its evidence.
        let from = inferbench_artifacts::evidence_file_in(&src.loaded.run.path)
            .unwrap_or_else(|| src.loaded.run.path.join(EVIDENCE_FILE));
        let mut f = inferbench_artifacts::open_evidence(&from).map_err(|e| io(&from, e))?;
        std::io::copy(&mut f, &mut raw).map_err(|e| io(&from, e))?;
    } else {
        let ev = &src.loaded.evidence;
        let mut line = |l: &EvidenceLine| -> Result<(), Failure> {
            serde_json::to_writer(&mut raw, l).map_err(|e| io(&path, e))?;
            raw.write_all(b"\n").map_err(|e| io(&path, e))
        };
        line(&EvidenceLine::Header(ev.header.clone()))?;
        for r in &ev.records {
            line(&EvidenceLine::Record(Box::new(r.clone())))?;
        }
        for p in &ev.phases {
            line(&EvidenceLine::Phase(*p))?;
        }
        if let Some(e) = &ev.end {
            line(&EvidenceLine::End(e.clone()))?;
        }
    }
    let raw_digest = format!("sha256:{}", hex::encode(raw.hash.finalize()));
    let raw_size = raw.size;
    let w = enc.finish().map_err(|e| io(&path, e))?;
    let file = finish_file(RECORDS, w, &path)?;
    Ok((
        file,
        json!({"format": "inferbench evidence JSON Lines", "sha256": raw_digest, "size": raw_size}),
    ))
}

/// Copies every file under `from` into `to`, byte for byte, listing each.
fn copy_tree(from: &Path, to: &Path, rel: &str, out: &mut Vec<PacketFile>) -> Result<(), Failure> {
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    let mut names: Vec<_> = std::fs::read_dir(from)
        .map_err(|e| io(from, e))?
        .filter_map(Result::ok)
        .collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        let name = e.file_name().to_string_lossy().into_owned();
        let (src, dst, r) = (e.path(), to.join(&name), format!("{rel}/{name}"));
        if src.is_dir() {
            copy_tree(&src, &dst, &r, out)?;
        } else if src.is_file() {
            let mut w = hashing(&dst)?;
            let mut f = File::open(&src).map_err(|e| io(&src, e))?;
            std::io::copy(&mut f, &mut w).map_err(|e| io(&src, e))?;
            out.push(finish_file(&r, w, &dst)?);
        }
    }
    Ok(())
}

/// Copies one file byte for byte into the packet as `rel`, listing it.
fn copy_file(from: &Path, tmp: &Path, rel: &str, out: &mut Vec<PacketFile>) -> Result<(), Failure> {
    let dst = tmp.join(rel);
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    let mut w = hashing(&dst)?;
    let mut f = File::open(from).map_err(|e| io(from, e))?;
    std::io::copy(&mut f, &mut w).map_err(|e| io(from, e))?;
    out.push(finish_file(rel, w, &dst)?);
    Ok(())
}

/// A run of ours: its manifest as `run_manifest.json`, and under `run/` the files the
/// readers need to treat the packet as the run (`RunDir::open`): the frozen inputs, the
/// summary the live run wrote (grading checks the re-score against it) and the client
/// resources side file, each when present. Exports and the console are derived: left out.
fn copy_run_files(tmp: &Path, src: &Source, out: &mut Vec<PacketFile>) -> Result<(), Failure> {
    let run = &src.loaded.run;
    let dir = &run.path;
    copy_file(
        &dir.join(inferbench_core::manifest::MANIFEST_FILE),
        tmp,
        PACKET_RUN_MANIFEST,
        out,
    )?;
    let names = run.names();
    for name in [
        names.inputs_json.as_str(),
        names.summary_json.as_str(),
        CLIENT_RESOURCES_FILE,
    ] {
        let from = dir.join(name);
        if from.is_file() {
            copy_file(&from, tmp, &format!("{PACKET_RUN_FILES}/{name}"), out)?;
        }
    }
    Ok(())
}

/// The source a manifest names: which tool wrote the run (the path is not content, so it
/// is left out: the same run added from another path is the same packet).
fn source_of(src: &Source) -> Value {
    match &src.loaded.imported {
        Some(i) => json!({"tool": i.tool.as_str(), "version": i.version, "imported": true}),
        None => json!({
            "tool": inferbench_core::TOOL_NAME,
            "version": src.loaded.manifest.as_ref().map(|m| m.tool.version.clone()),
            "benchmark_id": src.loaded.manifest.as_ref().map(|m| m.benchmark_id.clone()),
            "imported": false,
        }),
    }
}

/// Builds the packet of `src` in the ledger (or finds the identical one already there).
pub fn build(ledger: &Ledger, src: &Source) -> Result<Packet, Failure> {
    let root = ledger.packets();
    std::fs::create_dir_all(&root).map_err(|e| io(&root, e))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = root.join(format!(".tmp-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| io(&tmp, e))?;
    let result = build_in(&tmp, src).and_then(|manifest| {
        let id = canonical::digest(&manifest).map_err(Failure::input)?;
        let dir = packet_dir(ledger, &id);
        let created = if dir.exists() {
            false
        } else {
            std::fs::rename(&tmp, &dir).map_err(|e| io(&dir, e))?;
            true
        };
        Ok(Packet {
            id,
            dir,
            manifest,
            created,
        })
    });
    if tmp.exists() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

fn build_in(tmp: &Path, src: &Source) -> Result<Value, Failure> {
    let mut files = vec![
        write_canonical(tmp, SUMMARY, &src.summary)?,
        write_canonical(tmp, GRADE, &src.grade)?,
    ];
    let (records, evidence) = write_records(tmp, src)?;
    files.push(records);
    if let Some(i) = &src.loaded.imported {
        copy_tree(&i.dir, &tmp.join(IMPORT_DIR), IMPORT_DIR, &mut files)?;
    } else {
        copy_run_files(tmp, src, &mut files)?;
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let manifest = json!({
        "schema": PACKET_SCHEMA,
        "source": source_of(src),
        "definition_set": src.loaded.native_set(),
        "identity": src.identity,
        "fingerprint": src.identity.fingerprint(),
        "evidence": evidence,
        "files": files,
    });
    write_canonical(tmp, MANIFEST, &manifest)?;
    Ok(manifest)
}

/// A packet's manifest, read back (and checked to be the packet `id`).
pub fn read_manifest(ledger: &Ledger, id: &str) -> Result<Value, Failure> {
    let p = packet_dir(ledger, id).join(MANIFEST);
    let bytes = std::fs::read(&p).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    serde_json::from_slice(&bytes).map_err(|e| Failure::input(format!("{}: {e}", p.display())))
}

/// A JSON file of a packet (`grade.json`, `summary.json`).
pub fn read_json(ledger: &Ledger, id: &str, rel: &str) -> Result<Value, Failure> {
    let p = packet_dir(ledger, id).join(rel);
    let bytes = std::fs::read(&p).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    serde_json::from_slice(&bytes).map_err(|e| Failure::input(format!("{}: {e}", p.display())))
}

/// A packet's evidence (`records.jsonl.zst`), decompressed as it is read.
pub fn open_records(path: &Path) -> std::io::Result<impl Read> {
    zstd::Decoder::new(File::open(path)?)
}

/// The sha256 and size of a file, streamed.
pub fn file_digest(path: &Path) -> std::io::Result<(String, u64)> {
    reader_digest(File::open(path)?)
}

/// The digest and size of an evidence file's lines (decompressed when it is `.zst`): what a
/// packet's `evidence.sha256` holds.
pub fn evidence_digest(path: &Path) -> std::io::Result<(String, u64)> {
    reader_digest(inferbench_artifacts::open_evidence(path)?)
}

fn reader_digest(mut f: impl Read) -> std::io::Result<(String, u64)> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok((format!("sha256:{}", hex::encode(h.finalize())), size))
}

/// What `verify` finds in one packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketCheck {
    /// Corruption: a file whose digest or size differs, a missing or unlisted file, a
    /// manifest that is not the packet's id.
    pub problems: Vec<String>,
    /// Not corruption: the evidence blob is absent (kept outside git, say).
    pub evidence_absent: bool,
}

/// Recomputes a packet's id from its manifest and every listed file's digest and size.
pub fn check(dir: &Path) -> PacketCheck {
    let mut out = PacketCheck::default();
    let name = dir
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let at = |rel: &str| format!("packet {name}: {rel}");
    let mp = dir.join(MANIFEST);
    let bytes = match std::fs::read(&mp) {
        Ok(b) => b,
        Err(e) => {
            out.problems.push(format!("{}: {e}", at(MANIFEST)));
            return out;
        }
    };
    let id = canonical::sha256_id(&bytes);
    if id.replacen(':', "-", 1) != name {
        out.problems.push(format!(
            "{}: digest {id} is not the packet's id (the manifest was changed)",
            at(MANIFEST)
        ));
    }
    let manifest: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            out.problems
                .push(format!("{}: not JSON: {e}", at(MANIFEST)));
            return out;
        }
    };
    let files: Vec<PacketFile> = match serde_json::from_value(manifest["files"].clone()) {
        Ok(f) => f,
        Err(e) => {
            out.problems.push(format!("{}: files: {e}", at(MANIFEST)));
            return out;
        }
    };
    for f in &files {
        // A listed path must stay inside the packet.
        if f.path.split('/').any(|c| c == ".." || c.is_empty()) {
            out.problems.push(format!(
                "{}: listed path is not inside the packet",
                at(&f.path)
            ));
            continue;
        }
        let p = dir.join(&f.path);
        match file_digest(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && f.path == RECORDS => {
                out.evidence_absent = true;
            }
            Err(e) => out.problems.push(format!("{}: {e}", at(&f.path))),
            Ok((d, size)) if d != f.sha256 || size != f.size => out.problems.push(format!(
                "{}: sha256 {d} ({size} bytes), the manifest lists {} ({} bytes)",
                at(&f.path),
                f.sha256,
                f.size
            )),
            Ok(_) => {}
        }
    }
    let mut present = Vec::new();
    list_files(dir, "", &mut present);
    for p in present {
        if p != MANIFEST && !files.iter().any(|f| f.path == p) {
            out.problems
                .push(format!("{}: not listed in the manifest", at(&p)));
        }
    }
    out
}

fn list_files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if e.path().is_dir() {
            list_files(&e.path(), &r, out);
        } else {
            out.push(r);
        }
    }
}
