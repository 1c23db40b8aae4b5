//! Shared by the benchmarks: the client that does only what any client must on scenario 1
//! (issue 13). One epoll thread, 64 keep-alive connections with `TCP_NODELAY`, each sending
//! the same streamed chat request (32 input / 16 output tokens) and reading the response
//! with one `read` per readiness event until the chunked body's last chunk. No parsing, no
//! JSON, no timestamps kept, no evidence, no tokenizer. Its CPU a request is what the
//! kernel and the syscalls alone cost; its rate is what the server gives a client that
//! never holds it up.

use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

pub const CONCURRENCY: usize = 64;
// The body inferbench sends in scenario 1 (its inputs.json, seed 1): the same prompt and
// output length, so the server does the same work per request.
const BODY: &str = r#"{"messages":[{"role":"user","content":" hell my female evil Tempteth my better angel from my side And would corrupt my saint to be a devil Wooing his purity with her foul pride And whether"}],"model":"mock-model","stream":true,"max_completion_tokens":16,"ignore_eos":true,"stream_options":{"include_usage":true}}"#;
// A chunked body ends with the zero-length chunk.
const END: &[u8] = b"\r\n0\r\n\r\n";

struct Slot {
    stream: TcpStream,
    // The last bytes read, so that an end split across two reads is still seen.
    tail: Vec<u8>,
}

/// One run of the floor client: its CPU (this process's, during the run), its reads and
/// its wall time from the first request sent to the last response's end.
pub struct FloorRun {
    pub user_s: f64,
    pub system_s: f64,
    pub reads: u64,
    pub wall_s: f64,
}

impl FloorRun {
    pub fn requests_per_s(&self, n: u64) -> f64 {
        n as f64 / self.wall_s
    }
}

fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

/// `n` requests against the server at `addr` (host:port), 64 at a time. The CPU is the
/// whole bench process's over the run: call it while no other thread of the bench works.
pub fn run(addr: &str, n: u64) -> FloorRun {
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    // SAFETY: plain epoll syscalls on descriptors this function owns.
    let ep = unsafe { libc::epoll_create1(0) };
    assert!(ep >= 0, "epoll_create1");
    let mut slots: Vec<Slot> = Vec::new();
    for i in 0..CONCURRENCY {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream.set_nonblocking(true).expect("nonblocking");
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        let r = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, stream.as_raw_fd(), &mut ev) };
        assert_eq!(r, 0, "epoll_ctl");
        slots.push(Slot {
            stream,
            tail: Vec::new(),
        });
    }
    let (u0, s0) = cpu_seconds();
    let start = std::time::Instant::now();
    let mut sent = 0u64;
    let mut done = 0u64;
    let mut reads = 0u64;
    for s in slots.iter_mut().take(n.min(CONCURRENCY as u64) as usize) {
        s.stream.write_all(request.as_bytes()).expect("send");
        sent += 1;
    }
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; CONCURRENCY];
    while done < n {
        let k = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), CONCURRENCY as i32, -1) };
        assert!(k >= 0, "epoll_wait");
        for ev in &events[..k as usize] {
            let s = &mut slots[ev.u64 as usize];
            let got =
                unsafe { libc::read(s.stream.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if got <= 0 {
                continue;
            }
            reads += 1;
            let got = got as usize;
            s.tail
                .extend_from_slice(&buf[got.saturating_sub(END.len())..got]);
            let keep = s.tail.len().saturating_sub(END.len());
            s.tail.drain(..keep);
            if s.tail == END {
                s.tail.clear();
                done += 1;
                if sent < n {
                    s.stream.write_all(request.as_bytes()).expect("send");
                    sent += 1;
                }
            }
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    let (u1, s1) = cpu_seconds();
    // SAFETY: `ep` is ours and no longer used.
    unsafe { libc::close(ep) };
    FloorRun {
        user_s: u1 - u0,
        system_s: s1 - s0,
        reads,
        wall_s,
    }
}
