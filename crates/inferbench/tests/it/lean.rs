//! The client's own cost, the parts that are not timing: the simulated server's per-event
//! socket writes (counted by the server itself), and compressed evidence read back by every
//! command as the plain file would be.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{MockServer, read_json, run, stderr, tmpdir};
use serde_json::Value;

/// One request on its own connection (`Connection: close`); the whole response, raw.
fn exchange(url: &str, method: &str, path: &str, body: &str) -> String {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    String::from_utf8(raw).unwrap()
}

fn stats(url: &str) -> Value {
    let text = exchange(url, "GET", "/sim/stats", "");
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}

const STREAM_16: &str = r#"{"model":"m","stream":true,"max_tokens":16,"messages":[{"role":"user","content":"hello there"}]}"#;

#[test]
fn each_sse_event_is_its_own_write_unless_coalescing() {
    // Zero delays: every event is due at once, where hyper would gather them all.
    let server = MockServer::start(&["--fast", "--workers", "1"]);
    let resp = exchange(&server.url, "POST", "/v1/chat/completions", STREAM_16);
    // 16 one-token events and [DONE] (no usage chunk: the request did not ask for one).
    assert_eq!(resp.matches("data: ").count(), 17, "{resp}");
    let s = stats(&server.url);
    assert_eq!(s["token_events"], 16, "{s}");
    assert_eq!(s["stream_frames"], 17, "{s}");
    // One flush per frame: at least 17 separate writes for one 16-token stream.
    assert_eq!(s["stream_writes"], 17, "{s}");

    let server = MockServer::start(&["--fast", "--workers", "1", "--coalesce"]);
    let resp = exchange(&server.url, "POST", "/v1/chat/completions", STREAM_16);
    assert_eq!(resp.matches("data: ").count(), 17);
    let s = stats(&server.url);
    assert_eq!(s["stream_frames"], 17, "{s}");
    // Never Pending at zero delay: the body asks for no flush before its end.
    assert_eq!(s["stream_writes"], 1, "{s}");
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn p(d: &Path) -> &str {
    d.to_str().unwrap()
}

/// A streamed run on the built-in server, its evidence stored as `compression`.
fn profile(root: &Path, compression: &str, requests: &str) -> PathBuf {
    let dir = root.join(compression);
    ok(&[
        "profile",
        "--streaming",
        "--request-count",
        requests,
        "--concurrency",
        "4",
        "--isl",
        "32",
        "--osl",
        "16",
        "--random-seed",
        "7",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--ui",
        "none",
        "--evidence-compression",
        compression,
        "--output-artifact-dir",
        p(&dir),
    ]);
    dir
}

/// `src` copied file by file into `dst`, with its `.zst` evidence decompressed by the zstd
/// library's own decoder (not ours) into the plain file.
fn plain_copy(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "inferbench_evidence.jsonl.zst" {
            let bytes = zstd::stream::decode_all(std::fs::File::open(e.path()).unwrap()).unwrap();
            std::fs::write(dst.join("inferbench_evidence.jsonl"), bytes).unwrap();
        } else {
            std::fs::copy(e.path(), dst.join(name)).unwrap();
        }
    }
}

const SUMMARY_FILES: [&str; 4] = [
    "profile_export_aiperf.json",
    "profile_export_aiperf.csv",
    "profile_export_console.txt",
    "profile_export.jsonl",
];

#[test]
fn compressed_evidence_rescored_to_the_plain_runs_bytes() {
    let root = tmpdir("lean-zst");
    let z = profile(&root, "zstd", "40");
    assert!(z.join("inferbench_evidence.jsonl.zst").is_file());
    assert!(!z.join("inferbench_evidence.jsonl").exists());
    let m = read_json(&z.join("inferbench_manifest.json"));
    let files: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        files.contains(&"inferbench_evidence.jsonl.zst"),
        "{files:?}"
    );
    assert!(z.join(".aiperf_results_ready.json").is_file());

    let plain = root.join("plain");
    plain_copy(&z, &plain);
    ok(&["metrics", p(&z), "--write"]);
    ok(&["metrics", p(&plain), "--write"]);
    for f in SUMMARY_FILES {
        let (a, b) = (
            std::fs::read(z.join(f)).unwrap(),
            std::fs::read(plain.join(f)).unwrap(),
        );
        assert!(!a.is_empty(), "{f}");
        assert_eq!(
            a, b,
            "{f} of the compressed run differs from the plain one's"
        );
    }
    // The live summary and the re-scored one are the same under the run's own set.
    let o = run(&["metrics", p(&z)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("identical to"), "{}", stderr(&o));

    // grade and compare read it as they read the plain file.
    let (ga, gb) = (root.join("ga.json"), root.join("gb.json"));
    ok(&["grade", p(&z), "--json", p(&ga)]);
    ok(&["grade", p(&plain), "--json", p(&gb)]);
    assert_eq!(read_json(&ga), read_json(&gb));
    let (ca, cb) = (root.join("ca.json"), root.join("cb.json"));
    ok(&["compare", p(&z), p(&z), "--json", p(&ca)]);
    ok(&["compare", p(&plain), p(&plain), "--json", p(&cb)]);
    // The same document but for the directories' paths.
    let unpathed = |f: &Path| {
        let mut v = read_json(f);
        for side in ["baseline", "candidate"] {
            for run in v[side].as_array_mut().unwrap() {
                run.as_object_mut().unwrap().remove("path");
            }
        }
        v
    };
    assert_eq!(unpathed(&ca), unpathed(&cb));

    // A plain run into the same directory leaves no compressed evidence of the earlier one.
    let again = profile(&root, "zstd", "5");
    assert_eq!(again, z);
    let plain_again = root.join("zstd");
    ok(&[
        "profile",
        "--request-count",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--output-artifact-dir",
        p(&plain_again),
    ]);
    assert!(plain_again.join("inferbench_evidence.jsonl").is_file());
    assert!(!plain_again.join("inferbench_evidence.jsonl.zst").exists());
}

/// The complete zstd frames of `bytes`: the end offset of each.
fn frame_ends(bytes: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let n = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..]).unwrap();
        at += n;
        ends.push(at);
    }
    ends
}

fn records_of(text: &[u8]) -> usize {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| l.starts_with(r#"{"line":"record""#) && l.ends_with('}'))
        .count()
}

#[test]
fn a_cut_compressed_evidence_reads_back_its_complete_frames() {
    let root = tmpdir("lean-cut");
    // Over a MiB of evidence: more than one frame of records.
    let z = profile(&root, "zstd", "1000");
    let path = z.join("inferbench_evidence.jsonl.zst");
    let bytes = std::fs::read(&path).unwrap();
    let ends = frame_ends(&bytes);
    let records_in = |i: usize| {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        records_of(&zstd::stream::decode_all(&bytes[start..ends[i]]).unwrap())
    };
    // Cut in the middle of the last frame that holds records: a killed run.
    let last = (0..ends.len()).rev().find(|&i| records_in(i) > 0).unwrap();
    let complete: usize = (0..last).map(records_in).sum();
    assert!(complete > 0, "one frame holds every record: {ends:?}");
    let cut = (ends[last - 1] + ends[last]) / 2;
    std::fs::write(&path, &bytes[..cut]).unwrap();

    let run_dir = inferbench_run::RunDir::open(&z).unwrap();
    let mut n = 0;
    for line in run_dir.evidence().unwrap() {
        if let inferbench_core::EvidenceLine::Record(_) = line.unwrap() {
            n += 1;
        }
    }
    assert!(
        n >= complete && n < 1000,
        "{n} records read, {complete} in complete frames"
    );
    // And `metrics` re-scores it, as the partial run it now is.
    let o = run(&["metrics", p(&z)]);
    assert!(stderr(&o).contains("this run is partial"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "recomputed {{\"unit\":\"requests\",\"avg\":{n}.0}}"
        )),
        "{}",
        stderr(&o)
    );
}
