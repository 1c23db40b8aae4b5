//! Load benchmark: the real binary against the simulated server running as a separate
//! process. Run with `cargo bench -p inferbench --bench load` (optionally `-- quick`).
//!
//! The server writes every SSE event as its own socket write (its default, as vLLM and
//! llama.cpp flush every token), so the client pays its per-frame cost; each scenario prints
//! the server's writes per stream to show it. Issue 13's targets are printed next to the
//! figures they judge.
//!
//! Scenario 1 (client cost): server with zero delays on one worker thread (`--workers 1`,
//! pinned to the last CPU with `taskset` when there is one, the client to the other CPUs,
//! `common/pin.rs`); 32 input / 16 output tokens per streamed chat request; concurrency 64.
//! Reports the client process's CPU time per request
//! (user + sys of the whole process, start to exit, from wait4), its achieved request rate,
//! its peak RSS (wait4's `ru_maxrss`), and the server process's CPU per request. Then the
//! floor client (`common/floor_client.rs`: epoll and `read` only) runs the same load against
//! the same server: its rate is what the server gives a client that never holds it up, so
//! inferbench's rate as a share of it says whether inferbench held the server back. Both
//! processes' busy shares are printed: when both are near one core, each is saturated and
//! the client's CPU a request is about one core over the server's rate, the client's spare
//! cycles spent on reads (docs/timing.md, "CPU: two saturated processes").
//!
//! Scenario 2 (timing accuracy): server TTFT 50 ms, ITL 10 ms; concurrency 64. Reports the
//! mean TTFT the client measured next to the mean TTFT the server actually waited (from the
//! server's `/sim/stats`).
//!
//! Scenario 3 (schedule): Poisson arrivals at 5,000 requests/s for 20 s: schedule lag p99 and
//! the achieved fraction.
//!
//! Scenario 6 (the client's tail): zero-delay server, concurrency 1: the reported TTFT p99,
//! which is all the client's own (the server adds nothing).
//!
//! `-- ui [ROUNDS]` runs only the progress display's cost: `--ui none` against `--ui simple`,
//! alternated (ABBA) for ROUNDS rounds (default 5), CPU per request and TTFT error each.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/pin.rs"]
mod pin;

#[path = "common/floor_client.rs"]
mod floor_client;

const BIN: &str = env!("CARGO_BIN_EXE_inferbench");

struct Server {
    child: Child,
    addr: String,
}

fn start_server(extra: &[&str]) -> Server {
    start_server_with(Command::new(BIN), extra)
}

/// The server on one runtime worker, pinned to the machine's last CPU when `taskset` exists
/// (the client's threads then compete with it only there).
fn start_one_thread_server(extra: &[&str]) -> Server {
    let cmd = pin::on_last_cpu(BIN);
    let mut args = vec!["--workers", "1"];
    args.extend_from_slice(extra);
    start_server_with(cmd, &args)
}

fn start_server_with(mut cmd: Command, extra: &[&str]) -> Server {
    let mut child = cmd
        .args(["mock-server", "--port", "0", "--host", "127.0.0.1"])
        .args(extra)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start mock-server");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let line = lines
        .next()
        .expect("mock-server said nothing")
        .expect("read stderr");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Server { child, addr }
}

impl Drop for Server {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT);
        }
        let _ = self.child.wait();
    }
}

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split("\r\n\r\n").nth(1).unwrap_or("").to_string()
}

/// Run a child to completion and return (wall, user+sys CPU) from wait4.
// The child is reaped by wait4 (which also gives its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(cmd: &mut Command) -> (Duration, Duration, i32) {
    let (wall, cpu, status, _) = run_measured_rss(cmd);
    (wall, cpu, status)
}

/// As [`run_measured`], with the child's peak RSS in KiB (wait4's `ru_maxrss`).
fn run_measured_rss(cmd: &mut Command) -> (Duration, Duration, i32, i64) {
    let m = run_measured_full(cmd);
    (m.wall, m.user + m.system, m.status, m.rss_kib)
}

/// One child's run as `wait4` reports it.
struct Measured {
    wall: Duration,
    user: Duration,
    system: Duration,
    status: i32,
    rss_kib: i64,
}

#[allow(clippy::zombie_processes)]
fn run_measured_full(cmd: &mut Command) -> Measured {
    let start = Instant::now();
    let child = cmd.spawn().expect("spawn client");
    let pid = child.id() as i32;
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4");
    let wall = start.elapsed();
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        wall,
        user: tv(ru.ru_utime),
        system: tv(ru.ru_stime),
        status,
        rss_kib: ru.ru_maxrss as i64,
    }
}

/// The server's socket writes per streamed response so far, from its own counters.
fn writes_per_stream(addr: &str) -> String {
    let s: serde_json::Value =
        serde_json::from_str(&http_get(addr, "/sim/stats")).unwrap_or_default();
    let writes = s["stream_writes"].as_f64().unwrap_or(f64::NAN);
    let frames = s["stream_frames"].as_f64().unwrap_or(f64::NAN);
    let streams = s["completed"].as_f64().unwrap_or(f64::NAN);
    format!(
        "server: {:.1} writes and {:.1} frames per response",
        writes / streams,
        frames / streams
    )
}

fn proc_cpu(pid: u32) -> Duration {
    // utime + stime in clock ticks, fields 14 and 15 of /proc/<pid>/stat.
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = s.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / hz.max(1))
}

fn summary_avg(dir: &Path, tag: &str) -> f64 {
    let text = std::fs::read_to_string(dir.join("profile_export_aiperf.json")).expect("summary");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v[tag]["avg"].as_f64().unwrap_or(f64::NAN)
}

fn client(addr: &str, dir: &Path, concurrency: u32, count: u64) -> Command {
    client_ui(addr, dir, concurrency, count, &load_ui())
}

/// `INFERBENCH_LOAD_UI=simple` runs every client with that progress display (issue 15: the
/// display must not cost timing accuracy); the default is none.
fn load_ui() -> String {
    std::env::var("INFERBENCH_LOAD_UI").unwrap_or_else(|_| "none".into())
}

fn client_ui(addr: &str, dir: &Path, concurrency: u32, count: u64, ui: &str) -> Command {
    client_from(Command::new(BIN), addr, dir, concurrency, count, ui)
}

/// As [`client`], kept off the last CPU, where the one-thread server runs (`common/pin.rs`).
fn client_off_server_cpu(addr: &str, dir: &Path, concurrency: u32, count: u64) -> Command {
    client_from(
        pin::off_last_cpu(BIN),
        addr,
        dir,
        concurrency,
        count,
        &load_ui(),
    )
}

fn client_from(
    mut c: Command,
    addr: &str,
    dir: &Path,
    concurrency: u32,
    count: u64,
    ui: &str,
) -> Command {
    c.args([
        "profile",
        "-m",
        "mock-model",
        "-u",
        addr,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--isl",
        "32",
        "--osl",
        "16",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "1",
        "--ui",
        ui,
        "--concurrency",
        &concurrency.to_string(),
        "--request-count",
        &count.to_string(),
        "--artifact-dir",
    ])
    .arg(dir)
    // The binary's hash cache (`inferbench/binary-sha256`) in the bench's own directory, not
    // the user's `~/.cache`; the first run fills it (scenario 1's warm run, when it runs).
    .env("XDG_CACHE_HOME", bench_dir().join("xdg-cache"))
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    c
}

/// The bench's temporary directory (removed at its end): run directories and the clients'
/// cache.
fn bench_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("inferbench-load-{}", std::process::id()))
}

/// Reads a request: a record's distinct frame instants (each is one socket read that
/// returned bytes), averaged over the run's records. The kernel's share of the client's CPU
/// follows it, and it varies with the server's pace from run to run (docs/timing.md).
fn reads_per_request(dir: &Path) -> f64 {
    let Ok(text) = std::fs::read_to_string(dir.join("inferbench_evidence.jsonl")) else {
        return f64::NAN;
    };
    let (mut records, mut reads) = (0usize, 0usize);
    for line in text
        .lines()
        .filter(|l| l.starts_with("{\"line\":\"record\""))
    {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let mut instants: Vec<u64> = v["frames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["t_ns"].as_u64())
            .collect();
        instants.sort_unstable();
        instants.dedup();
        records += 1;
        reads += instants.len();
    }
    reads as f64 / records.max(1) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("load: benchmark");
        return;
    }
    let quick = args.iter().any(|a| a == "quick");
    let tmp = bench_dir();
    let _ = std::fs::create_dir_all(&tmp);
    if let Some(i) = args.iter().position(|a| a == "ui") {
        // `-- ui [ROUNDS]`: only the progress display's cost, display off against on.
        let rounds = args.get(i + 1).and_then(|a| a.parse().ok()).unwrap_or(5);
        ui_cost(&tmp, rounds);
        let _ = std::fs::remove_dir_all(&tmp);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "memory") {
        // `-- memory [N...]`: only the memory scenario, at each request count given.
        let counts: Vec<u64> = args[i + 1..]
            .iter()
            .filter_map(|a| a.parse().ok())
            .collect();
        memory(
            &tmp,
            if counts.is_empty() {
                &[100_000, 1_000_000]
            } else {
                &counts
            },
        );
        let _ = std::fs::remove_dir_all(&tmp);
        return;
    }

    // Scenario 1: client cost against a zero-delay server.
    let n: u64 = if quick { 20_000 } else { 100_000 };
    let server = start_one_thread_server(&["--fast"]);
    // A short warm run so that page cache and connection set-up do not skew the first figure.
    let _ = run_measured(&mut client_off_server_cpu(
        &server.addr,
        &tmp.join("warm"),
        64,
        2_000,
    ));
    let server_cpu0 = proc_cpu(server.child.id());
    let dir1 = tmp.join("cost");
    let m = run_measured_full(&mut client_off_server_cpu(&server.addr, &dir1, 64, n));
    let (wall, cpu, status, rss_kib) = (m.wall, m.user + m.system, m.status, m.rss_kib);
    let server_cpu = proc_cpu(server.child.id()) - server_cpu0;
    assert_eq!(status, 0, "client failed");
    let rate = summary_avg(&dir1, "request_throughput");
    println!(
        "== client cost: zero-delay one-thread server, per-event writes, 32 in / 16 out streamed, concurrency 64, {n} requests"
    );
    println!(
        "client: {:.1} µs CPU per request (target ≤ 50; whole process, start to exit: {:.2} s CPU over {:.2} s wall; user {:.1} and system {:.1} µs a request)",
        cpu.as_secs_f64() * 1e6 / n as f64,
        cpu.as_secs_f64(),
        wall.as_secs_f64(),
        m.user.as_secs_f64() * 1e6 / n as f64,
        m.system.as_secs_f64() * 1e6 / n as f64
    );
    println!(
        "server: {:.1} µs CPU per request",
        server_cpu.as_secs_f64() * 1e6 / n as f64
    );
    println!("achieved: {rate:.0} requests/s (request_throughput of the run)");
    println!(
        "client reads a request: {:.1} (the kernel's part of the CPU follows them, and a client quicker in user space reads more often)",
        reads_per_request(&dir1)
    );
    println!(
        "client peak RSS: {:.1} MiB ({:.0} bytes per request)",
        rss_kib as f64 / 1024.0,
        rss_kib as f64 * 1024.0 / n as f64
    );
    println!("{}", writes_per_stream(&server.addr));
    println!(
        "busy: client {:.2} of a core over its {:.2} s, server {:.2} over the same wall",
        cpu.as_secs_f64() / wall.as_secs_f64(),
        wall.as_secs_f64(),
        server_cpu.as_secs_f64() / wall.as_secs_f64()
    );
    // The floor client runs on a thread kept off the server's CPU, as inferbench was.
    let f = pin::off_last_cpu_thread(|| floor_client::run(&server.addr, n));
    let floor_rate = f.requests_per_s(n);
    println!(
        "floor client, same load and server: {floor_rate:.0} requests/s at {:.1} µs CPU a request ({:.1} reads); inferbench's rate is {:.1} % of it ({})",
        (f.user_s + f.system_s) * 1e6 / n as f64,
        f.reads as f64 / n as f64,
        100.0 * rate / floor_rate,
        if rate >= 0.95 * floor_rate {
            "the server, not the client, set the rate"
        } else {
            "the client held the server back"
        }
    );
    drop(server);

    // Scenario 2: TTFT accuracy with real delays.
    let n2: u64 = if quick { 640 } else { 3_200 };
    let server = start_server(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let dir2 = tmp.join("accuracy");
    // 64 warmup requests open the 64 connections, so that the profiled requests run on
    // established connections: connection set-up is in the client's TTFT (as in AIPerf) but
    // the server cannot see it. The server's mean covers the warmup requests too; its TTFT
    // does not depend on the connection, so that only adds noise.
    let mut c = client(&server.addr, &dir2, 64, n2);
    c.args(["--warmup-request-count", "64"]);
    let (_, _, status) = run_measured(&mut c);
    assert_eq!(status, 0, "client failed");
    let stats: serde_json::Value =
        serde_json::from_str(&http_get(&server.addr, "/sim/stats")).expect("sim stats");
    let client_ttft = summary_avg(&dir2, "time_to_first_token");
    let server_ttft = stats["ttft"]["mean_ms"].as_f64().unwrap_or(f64::NAN);
    println!("== timing accuracy: server ttft 50 ms, itl 10 ms, concurrency 64, {n2} requests");
    println!(
        "client mean TTFT {client_ttft:.3} ms; server waited {server_ttft:.3} ms; difference {:.3} ms (target ≤ 0.2)",
        client_ttft - server_ttft
    );
    println!("server stats: {stats}");
    drop(server);

    // Scenario 3: schedule keeping under Poisson arrivals.
    let secs = if quick { "5" } else { "20" };
    let server = start_server(&["--fast"]);
    let dir3 = tmp.join("poisson");
    let mut c = client(&server.addr, &dir3, 64, 1);
    c.args([
        "--request-rate",
        "5000",
        "--arrival-pattern",
        "poisson",
        "--benchmark-duration",
        secs,
    ]);
    // With --concurrency 64 from `client`, a ceiling far above what a zero-delay server
    // keeps in flight at this rate (a few requests).
    let (wall, cpu, status) = run_measured(&mut c);
    let s3: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir3.join("profile_export_aiperf.json")).expect("summary"),
    )
    .expect("json");
    let n3 = s3["schedule_lag"]["count"].as_f64().unwrap_or(f64::NAN);
    println!(
        "== schedule: Poisson 5000 requests/s for {secs} s, 16 output tokens, zero-delay server"
    );
    println!(
        "status {status}; {n3} requests; scheduled {:.1}/s, achieved {:.1}/s ({:.2} % of scheduled, target ≥ 99); schedule lag p50 {:.3} ms, p99 {:.3} ms (target ≤ 1), max {:.3} ms; kept: {}",
        s3["scheduled_request_rate"]["avg"]
            .as_f64()
            .unwrap_or(f64::NAN),
        s3["achieved_request_rate"]["avg"]
            .as_f64()
            .unwrap_or(f64::NAN),
        s3["achieved_request_rate"]["avg"]
            .as_f64()
            .unwrap_or(f64::NAN)
            / s3["scheduled_request_rate"]["avg"]
                .as_f64()
                .unwrap_or(f64::NAN)
            * 100.0,
        s3["schedule_lag"]["p50"].as_f64().unwrap_or(f64::NAN),
        s3["schedule_lag"]["p99"].as_f64().unwrap_or(f64::NAN),
        s3["schedule_lag"]["max"].as_f64().unwrap_or(f64::NAN),
        s3["schedule_kept"]["avg"].as_f64() == Some(1.0),
    );
    println!(
        "client: {:.1} µs CPU per request over {:.1} s wall",
        cpu.as_secs_f64() * 1e6 / n3,
        wall.as_secs_f64()
    );
    drop(server);

    // Scenario 4: multi-turn sessions with history (each later turn's body is rebuilt with
    // the conversation so far), against a zero-delay server.
    let n4: u64 = if quick { 8_000 } else { 40_000 };
    let server = start_server(&["--fast"]);
    let dir4 = tmp.join("sessions");
    let mut c = client(&server.addr, &dir4, 64, n4);
    c.args([
        "--conversation-num",
        "2000",
        "--conversation-turn-mean",
        "4",
    ]);
    let (wall, cpu, status) = run_measured(&mut c);
    assert_eq!(status, 0, "client failed");
    let rate = summary_avg(&dir4, "request_throughput");
    let isl = summary_avg(&dir4, "input_sequence_length");
    println!(
        "== sessions: 2000 conversations of 4 turns with history, concurrency 64, {n4} requests, zero-delay server"
    );
    println!(
        "client: {:.1} µs CPU per request ({:.2} s CPU over {:.2} s wall); achieved {rate:.0} requests/s; mean ISL {isl:.0} tokens",
        cpu.as_secs_f64() * 1e6 / n4 as f64,
        cpu.as_secs_f64(),
        wall.as_secs_f64()
    );
    drop(server);

    // Scenario 5: what scraping costs the client. Scenario 2's load twice against one
    // server: scraping off, then the server's /metrics and its DCGM endpoint at 10 Hz (ten
    // times the default rate, to magnify any cost). TTFT error = client mean − server mean.
    let n5: u64 = if quick { 640 } else { 3_200 };
    let server = start_server(&["--ttft-ms", "50", "--itl-ms", "10"]);
    println!(
        "== scraping: server ttft 50 ms, itl 10 ms, concurrency 64, {n5} requests, off vs 10 Hz"
    );
    let dcgm = format!("http://{}/dcgm/metrics", server.addr);
    for (label, flags) in [
        ("off", vec!["--no-server-metrics", "--no-gpu-telemetry"]),
        (
            "on (10 Hz)",
            vec![
                "--server-metrics-interval",
                "0.1",
                "--gpu-telemetry",
                dcgm.as_str(),
                "--gpu-telemetry-interval",
                "0.1",
            ],
        ),
    ] {
        let before: serde_json::Value =
            serde_json::from_str(&http_get(&server.addr, "/sim/stats")).expect("sim stats");
        let dir5 = tmp.join(format!("scrape-{}", label.len()));
        let mut c = client(&server.addr, &dir5, 64, n5);
        c.args(["--warmup-request-count", "64"]).args(&flags);
        let (wall, cpu, status) = run_measured(&mut c);
        assert_eq!(status, 0, "client failed");
        let after: serde_json::Value =
            serde_json::from_str(&http_get(&server.addr, "/sim/stats")).expect("sim stats");
        // The server's mean over this run alone, from its cumulative counts.
        let sum = |v: &serde_json::Value| {
            v["ttft"]["mean_ms"].as_f64().unwrap_or(f64::NAN)
                * v["ttft"]["count"].as_f64().unwrap_or(0.0)
        };
        let count = |v: &serde_json::Value| v["ttft"]["count"].as_f64().unwrap_or(0.0);
        let server_ttft = (sum(&after) - sum(&before)) / (count(&after) - count(&before));
        let client_ttft = summary_avg(&dir5, "time_to_first_token");
        let scrapes = std::fs::read_to_string(dir5.join("inferbench_scrapes.jsonl"))
            .map(|t| t.lines().count().saturating_sub(2))
            .unwrap_or(0);
        println!(
            "scraping {label}: TTFT error {:.3} ms (client {client_ttft:.3}, server {server_ttft:.3}); client {:.1} µs CPU per request ({:.2} s CPU over {:.2} s wall); {scrapes} scrapes",
            client_ttft - server_ttft,
            cpu.as_secs_f64() * 1e6 / n5 as f64,
            cpu.as_secs_f64(),
            wall.as_secs_f64()
        );
    }
    drop(server);

    // Scenario 6: the tail the client adds. Zero server delay, one request at a time: the
    // reported TTFT is the client's own latency (plus loopback), its p99 the hiccups.
    let n6: u64 = if quick { 2_000 } else { 10_000 };
    let server = start_one_thread_server(&["--fast"]);
    let dir6 = tmp.join("tail");
    let mut c = client(&server.addr, &dir6, 1, n6);
    c.args(["--warmup-request-count", "100"]);
    let (_, _, status) = run_measured(&mut c);
    assert_eq!(status, 0, "client failed");
    let s6: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir6.join("profile_export_aiperf.json")).expect("summary"),
    )
    .expect("json");
    let ttft = &s6["time_to_first_token"];
    println!("== tail: zero-delay one-thread server, concurrency 1, {n6} requests");
    println!(
        "reported TTFT p50 {:.3} ms, p99 {:.3} ms (target ≤ 0.2), max {:.3} ms",
        ttft["p50"].as_f64().unwrap_or(f64::NAN),
        ttft["p99"].as_f64().unwrap_or(f64::NAN),
        ttft["max"].as_f64().unwrap_or(f64::NAN),
    );
    println!("{}", writes_per_stream(&server.addr));
    drop(server);
    let _ = std::fs::remove_dir_all(PathBuf::from(&tmp));
}

/// Scenario 7 (memory): scenario 1's load at each request count, one run each, against a
/// fresh one-thread server: the client's peak RSS (wait4's `ru_maxrss`) and what it adds per
/// request over a 2,000-request run (the fixed part: tokenizer, set-up). The run directory
/// is deleted after each run (1,000,000 requests write about 4 GB).
fn memory(tmp: &Path, counts: &[u64]) {
    let server = start_one_thread_server(&["--fast"]);
    let base_dir = tmp.join("mem-base");
    let (_, _, status, base_kib) =
        run_measured_rss(&mut client(&server.addr, &base_dir, 64, 2_000));
    assert_eq!(status, 0, "client failed");
    let _ = std::fs::remove_dir_all(&base_dir);
    println!(
        "== memory: scenario 1's load; 2,000 requests peak at {:.1} MiB",
        base_kib as f64 / 1024.0
    );
    for &n in counts {
        let dir = tmp.join(format!("mem-{n}"));
        let (wall, cpu, status, kib) = run_measured_rss(&mut client(&server.addr, &dir, 64, n));
        assert_eq!(status, 0, "client failed");
        // While requests run (the resource sampler's maximum), apart from the end-of-run
        // statistics that the peak includes.
        let during = std::fs::read(dir.join("inferbench_client_resources.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["summary"]["rss_max_bytes"].as_f64())
            .unwrap_or(f64::NAN);
        let _ = std::fs::remove_dir_all(&dir);
        println!(
            "{n} requests: peak RSS {:.1} MiB ({:.1} MiB during the run), {:.0} bytes per request over the 2,000-request run (target: a few hundred); {:.1} µs CPU per request over {:.1} s wall",
            kib as f64 / 1024.0,
            during / 1048576.0,
            (kib - base_kib) as f64 * 1024.0 / (n - 2_000) as f64,
            cpu.as_secs_f64() * 1e6 / n as f64,
            wall.as_secs_f64()
        );
    }
}

/// The live progress display's cost (issue 15): the client with `--ui none` against
/// `--ui simple` (the display that draws without a terminal, a line a second to stderr, so
/// it runs here where stderr is /dev/null), back to back, in ABBA order each round so that
/// a drift of the shared machine's load falls on both modes alike. Each run reports the
/// client's CPU per request (wait4's rusage, start to exit) against a zero-delay one-thread
/// server, and its mean TTFT minus the TTFT the server waited (50 ms, from `/sim/stats`).
/// The spread within a mode is printed next to the difference between modes: the
/// difference means something only when it is larger than the spread.
fn ui_cost(tmp: &Path, rounds: usize) {
    let (n_cost, n_acc) = (10_000u64, 640u64);
    let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut err: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    const MODES: [&str; 2] = ["none", "simple"];
    println!(
        "== progress display cost: {rounds} rounds, ABBA; cost {n_cost} requests at concurrency 64 against a zero-delay one-thread server, accuracy {n_acc} requests at concurrency 64 against ttft 50 ms / itl 10 ms"
    );
    let fast = start_one_thread_server(&["--fast"]);
    let _ = run_measured(&mut client(&fast.addr, &tmp.join("warm"), 64, 2_000));
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for m in order {
            let dir = tmp.join(format!("ui-cost-{round}-{}", MODES[m]));
            let (_, c, status) =
                run_measured(&mut client_ui(&fast.addr, &dir, 64, n_cost, MODES[m]));
            assert_eq!(status, 0, "client failed");
            let per = c.as_secs_f64() * 1e6 / n_cost as f64;
            // A fresh server each accuracy run: its /sim/stats mean is then this run's.
            let slow = start_server(&["--ttft-ms", "50", "--itl-ms", "10"]);
            let dir = tmp.join(format!("ui-acc-{round}-{}", MODES[m]));
            let mut cmd = client_ui(&slow.addr, &dir, 64, n_acc, MODES[m]);
            cmd.args(["--warmup-request-count", "64"]);
            let (_, _, status) = run_measured(&mut cmd);
            assert_eq!(status, 0, "client failed");
            let stats: serde_json::Value =
                serde_json::from_str(&http_get(&slow.addr, "/sim/stats")).expect("sim stats");
            let e = summary_avg(&dir, "time_to_first_token")
                - stats["ttft"]["mean_ms"].as_f64().unwrap_or(f64::NAN);
            println!(
                "round {round} ui {:<6}: {per:7.1} µs CPU per request; TTFT error {e:.3} ms",
                MODES[m]
            );
            cpu[m].push(per);
            err[m].push(e);
        }
    }
    for m in 0..2 {
        let (c, e) = (spread(&cpu[m]), spread(&err[m]));
        println!(
            "ui {:<6}: CPU per request median {:.1} µs (min {:.1}, max {:.1}); TTFT error median {:.3} ms (min {:.3}, max {:.3})",
            MODES[m], c.1, c.0, c.2, e.1, e.0, e.2
        );
    }
    println!(
        "simple − none: CPU per request {:+.1} µs, TTFT error {:+.3} ms (medians)",
        spread(&cpu[1]).1 - spread(&cpu[0]).1,
        spread(&err[1]).1 - spread(&err[0]).1
    );
}

/// (min, median, max); the median of an even count is the mean of the middle two.
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let med = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (s[0], med, s[n - 1])
}
