//! The ledger directory and its one append path. An append holds an exclusive lock on
//! `ledger.lock` while it reads the tail, writes the line with one `write_all` and fsyncs,
//! so two writers never interleave and a crash leaves either the whole line or a cut last
//! line (which `verify` reports and the next append refuses).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use inferbench_run::Failure;
use serde_json::Value;

use crate::entry::{Entry, FORMAT_VERSION, LineError, Stamp, parse_line};

pub const LEDGER_FILE: &str = "ledger.jsonl";
pub const LOCK_FILE: &str = "ledger.lock";
pub const PACKETS_DIR: &str = "packets";
pub const EPOCHS_DIR: &str = "epochs";

#[derive(Clone, Debug)]
pub struct Ledger {
    pub dir: PathBuf,
}

/// The ledger file split into lines: the complete ones, and a cut last line if the file does
/// not end with a newline.
pub struct RawLines {
    pub lines: Vec<Vec<u8>>,
    pub cut: Option<Vec<u8>>,
}

pub fn split_lines(bytes: &[u8]) -> RawLines {
    let mut lines: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    // `split` yields a last, empty piece after a final newline; anything else there is cut.
    let last = lines.pop().unwrap_or_default();
    RawLines {
        lines,
        cut: (!last.is_empty()).then_some(last),
    }
}

/// Every line parsed strictly: the first bad line is an error naming it and its field.
pub fn parse_all(path: &Path, bytes: &[u8]) -> Result<Vec<Entry>, Failure> {
    let raw = split_lines(bytes);
    if raw.cut.is_some() {
        return Err(Failure::input(format!(
            "{}: line {}: cut (no newline at the end): an append was interrupted; run `inferbench ledger verify` and truncate the file after line {}",
            path.display(),
            raw.lines.len() + 1,
            raw.lines.len()
        )));
    }
    raw.lines
        .iter()
        .enumerate()
        .map(|(i, l)| parse_line(l, i + 1).map_err(|e| line_failure(path, &e)))
        .collect()
}

pub fn line_failure(path: &Path, e: &LineError) -> Failure {
    Failure::input(format!("{}: {e}", path.display()))
}

fn io(path: &Path, e: std::io::Error) -> Failure {
    Failure::run(format!("{}: {e}", path.display()))
}

/// Held for the whole read-tail + write + fsync of an append (or a merge's rewrite).
pub(crate) struct LockGuard(#[allow(dead_code)] File);

impl Ledger {
    pub fn file(&self) -> PathBuf {
        self.dir.join(LEDGER_FILE)
    }

    pub fn packets(&self) -> PathBuf {
        self.dir.join(PACKETS_DIR)
    }

    pub fn epochs(&self) -> PathBuf {
        self.dir.join(EPOCHS_DIR)
    }

    /// Creates `DIR/ledger.jsonl` with a first `ledger.init` entry that records the format
    /// version, and `packets/`, `epochs/`. Refuses a non-empty existing ledger.
    pub fn init(dir: &Path, stamp: &Stamp) -> Result<Ledger, Failure> {
        let ledger = Ledger {
            dir: dir.to_path_buf(),
        };
        let file = ledger.file();
        if std::fs::metadata(&file).is_ok_and(|m| m.len() > 0) {
            return Err(Failure::input(format!(
                "{}: a ledger is already here; refusing to start another",
                file.display()
            )));
        }
        for d in [ledger.dir.clone(), ledger.packets(), ledger.epochs()] {
            std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
        }
        let body = serde_json::json!({
            "format": FORMAT_VERSION,
            "tool": format!("{} {}", inferbench_core::TOOL_NAME, inferbench_core::TOOL_VERSION),
        });
        ledger.append(None, "ledger.init", body, stamp)?;
        Ok(ledger)
    }

    /// An existing ledger directory.
    pub fn open(dir: &Path) -> Result<Ledger, Failure> {
        let ledger = Ledger {
            dir: dir.to_path_buf(),
        };
        if !ledger.file().is_file() {
            return Err(Failure::input(format!(
                "{}: no {LEDGER_FILE} here; create one with `inferbench ledger init {}`",
                dir.display(),
                dir.display()
            )));
        }
        Ok(ledger)
    }

    pub fn read_bytes(&self) -> Result<Vec<u8>, Failure> {
        let p = self.file();
        match std::fs::read(&p) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io(&p, e)),
        }
    }

    /// Every entry, strictly parsed (not verified: see [`crate::verify`]).
    pub fn entries(&self) -> Result<Vec<Entry>, Failure> {
        parse_all(&self.file(), &self.read_bytes()?)
    }

    pub(crate) fn lock(&self) -> Result<LockGuard, Failure> {
        let p = self.dir.join(LOCK_FILE);
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| io(&p, e))?;
        f.lock().map_err(|e| io(&p, e))?;
        Ok(LockGuard(f))
    }

    /// Appends one entry under the lock. `check` sees every entry already there and may
    /// refuse (a duplicate packet, an epoch name in use); nothing is written then.
    #[allow(clippy::type_complexity)]
    pub fn append(
        &self,
        check: Option<&dyn Fn(&[Entry]) -> Result<(), Failure>>,
        kind: &str,
        body: Value,
        stamp: &Stamp,
    ) -> Result<Entry, Failure> {
        let _guard = self.lock()?;
        let path = self.file();
        let existing = parse_all(&path, &self.read_bytes()?)?;
        if let Some(check) = check {
            check(&existing)?;
        }
        let prev = existing.last().map(|e| (e.seq, e.hash.as_str()));
        let entry = Entry::seal(prev, kind, stamp, body).map_err(Failure::input)?;
        let mut line = entry.to_line().map_err(Failure::input)?;
        line.push('\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        // One write of the whole line: a crash cuts it at worst, never splices two lines.
        f.write_all(line.as_bytes()).map_err(|e| io(&path, e))?;
        f.sync_all().map_err(|e| io(&path, e))?;
        Ok(entry)
    }

    /// Replaces the whole file (for `merge`), through a temp file and a rename, under the lock.
    pub(crate) fn rewrite(&self, _guard: &LockGuard, entries: &[Entry]) -> Result<(), Failure> {
        let path = self.file();
        let tmp = self
            .dir
            .join(format!(".{LEDGER_FILE}.tmp-{}", std::process::id()));
        let mut text = String::new();
        for e in entries {
            text.push_str(&e.to_line().map_err(Failure::input)?);
            text.push('\n');
        }
        let mut f = File::create(&tmp).map_err(|e| io(&tmp, e))?;
        f.write_all(text.as_bytes()).map_err(|e| io(&tmp, e))?;
        f.sync_all().map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))
    }
}

/// `append(ledger, kind, body)` for other commands (e.g. `compare` writing a
/// `comparison.record`): the wall clock and `$USER`.
pub fn append(ledger: &Ledger, kind: &str, body: Value) -> Result<Entry, Failure> {
    let by = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    ledger.append(None, kind, body, &Stamp::now(&by))
}
