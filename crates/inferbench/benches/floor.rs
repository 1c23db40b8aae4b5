//! Benchmark (not a test): the CPU floor of *any* client on scenario 1 of `load.rs` (issue 13).
//!
//! The client of `common/floor_client.rs`, which does only the unavoidable: epoll, one `read`
//! per readiness event, no parsing, no timestamps, no evidence. Against a server that writes
//! every SSE event as its own socket write, its CPU per request (user + sys from
//! `getrusage`) is what the kernel and the syscalls alone cost at its read count, and its
//! rate is what the server gives a client that never holds it up (`load.rs` runs it after
//! inferbench against the same server and compares the rates). The same one-thread
//! mock-server as `load.rs`, pinned to the last CPU when `taskset` exists.
//!
//! Run: `cargo bench -p inferbench --bench floor` (`-- quick`: 20,000 requests, else 100,000).

use std::io::{BufRead, BufReader};
use std::process::Stdio;

#[path = "common/pin.rs"]
mod pin;

#[path = "common/floor_client.rs"]
mod floor_client;

use floor_client::CONCURRENCY;

const BIN: &str = env!("CARGO_BIN_EXE_inferbench");

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("floor: benchmark");
        return;
    }
    let n: u64 = if args.iter().any(|a| a == "quick") {
        20_000
    } else {
        100_000
    };
    let mut cmd = pin::on_last_cpu(BIN);
    let mut server = cmd
        .args(["mock-server", "--port", "0", "--host", "127.0.0.1"])
        .args(["--workers", "1", "--fast"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mock-server");
    let mut line = String::new();
    BufReader::new(server.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("mock-server said nothing");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("listening address")
        .to_string();

    let f = pin::off_last_cpu_thread(|| floor_client::run(&addr, n));
    let per = |x: f64| x * 1e6 / n as f64;
    println!(
        "== floor: epoll-only client, zero-delay one-thread server, per-event writes, 32 in / 16 out streamed, concurrency {CONCURRENCY}, {n} requests"
    );
    println!(
        "client: {:.1} µs CPU per request ({:.1} user + {:.1} sys); {:.1} reads per request; {:.0} requests/s",
        per(f.user_s + f.system_s),
        per(f.user_s),
        per(f.system_s),
        f.reads as f64 / n as f64,
        f.requests_per_s(n)
    );
    let _ = server.kill();
    let _ = server.wait();
}
