//! Helpers shared by the integration tests: temporary directories, running the binary with
//! a time bound, reading its files, and a standalone `mock-server` on 127.0.0.1:0.
#![allow(dead_code)] // each test file uses a different subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_inferbench");

/// A command running the built binary with `XDG_CACHE_HOME` inside this process's test root,
/// so that its cache of its own SHA-256 (`inferbench/binary-sha256`) is written there and
/// not into the developer's `~/.cache`. Every test that runs the binary starts it from here.
pub fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env("XDG_CACHE_HOME", root().join("xdg-cache"));
    c
}

/// A fresh directory, unique per call, under one root per test process
/// (`$TMPDIR/inferbench-it-<pid>/`). The root is removed when the test binary exits, unless
/// `INFERBENCH_KEEP_TEST_DIRS` is set (to look at a failed test's files).
pub fn tmpdir(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let d = root().join(format!("{name}-{}", N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// This process's test root, emptied on first use and removed at exit.
fn root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let r = test_root();
        let _ = std::fs::remove_dir_all(&r);
        if std::env::var_os("INFERBENCH_KEEP_TEST_DIRS").is_none() {
            // SAFETY: registers a plain `extern "C"` function with no arguments; it runs once,
            // at process exit, after the test harness has joined every test thread.
            unsafe { libc::atexit(remove_test_root) };
        }
        r
    })
}

fn test_root() -> PathBuf {
    std::env::temp_dir().join(format!("inferbench-it-{}", std::process::id()))
}

extern "C" fn remove_test_root() {
    let _ = std::fs::remove_dir_all(test_root());
}

/// Run the binary, killing it if it takes longer than two minutes.
pub fn run(args: &[&str]) -> Output {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn inferbench");
    // The pipes are drained while the child runs: a sweep's tables fill a pipe's 64 KiB,
    // and a child blocked writing would never exit.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as _));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as _));
    wait_bounded(&mut child, Duration::from_secs(120));
    let status = child.wait().expect("wait");
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

pub fn wait_bounded(child: &mut Child, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().expect("try_wait").is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("inferbench did not finish within {limit:?}");
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The manifest `m` is valid under the checked-in `docs/schemas/manifest.schema.json`.
pub fn assert_manifest_schema(m: &Value) {
    let schema = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

pub fn jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// The lines of an evidence file. A killed run may leave its last line cut short; that line
/// (and only that one) is skipped, as the evidence reader does.
pub fn evidence_lines(dir: &Path) -> Vec<Value> {
    let p = dir.join("inferbench_evidence.jsonl");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Value>(l) {
            Ok(v) => out.push(v),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => panic!("{}:{}: {e}", p.display(), i + 1),
        }
    }
    out
}

/// The record lines of an evidence file, in file order.
pub fn evidence_records(dir: &Path) -> Vec<Value> {
    evidence_lines(dir)
        .into_iter()
        .filter(|l| l["line"] == "record")
        .collect()
}

/// A standalone `inferbench mock-server` on 127.0.0.1:0; killed on drop.
pub struct MockServer {
    child: Child,
    pub url: String,
}

impl MockServer {
    pub fn start(extra: &[&str]) -> MockServer {
        let mut child = bin()
            .args(["mock-server", "--port", "0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mock-server");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().expect("a first line").expect("utf-8");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        std::thread::spawn(move || for _ in lines {});
        MockServer { child, url }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies every file under `from` into `to`, subdirectories included (a run with a warmup
/// has `phases/`).
pub fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dst = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_tree(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).unwrap();
        }
    }
}
