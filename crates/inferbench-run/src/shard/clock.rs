//! The clock evidence of a shard: the kernel's own estimate (a read-only `adjtimex`, no
//! privilege needed), and 4-timestamp exchanges over UDP with a time reference, which
//! `inferbench time-server` is ([`TimeServer`]).
//!
//! The exchange is one datagram each way. Request (16 bytes): `IBTQ`, 4 zero bytes, a u64
//! nonce. Answer (32 bytes): `IBTR`, 4 zero bytes, the nonce, t2 and t3 (u64 Unix ns, little
//! endian): when the reference read the request and when it sent the answer. The shard stamps
//! t1 before sending and t4 after reading; a first, uncounted exchange warms the path up
//! (so set-up time is never taken for delay).

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use inferbench_core::shard::KernelClock;
use inferbench_core::shard::clock::{Exchange, OffsetEstimate, estimate};

const REQUEST: &[u8; 4] = b"IBTQ";
const ANSWER: &[u8; 4] = b"IBTR";
/// How long one exchange waits for its answer.
const ANSWER_WAIT: Duration = Duration::from_millis(200);
/// The pause between exchanges (32 exchanges take about 0.1 s).
const SPACING: Duration = Duration::from_millis(2);

/// The real wall clock, Unix ns.
fn system_now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// This process's wall clock: the system's, shifted by the hidden test offset
/// (`--test-clock-offset-ms`), so that local processes can have clocks that disagree.
#[derive(Clone, Copy, Debug, Default)]
pub struct WallClock {
    pub offset_ns: i64,
}

impl WallClock {
    pub fn now_ns(&self) -> u64 {
        (system_now_ns() as i128 + self.offset_ns as i128).max(0) as u64
    }
}

/// The kernel's clock state through `adjtimex` with `modes = 0` (read only); None where the
/// call fails.
pub fn kernel_clock() -> Option<KernelClock> {
    // SAFETY: a zeroed `timex` is a valid argument; modes = 0 only reads.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    t.modes = 0;
    let state = unsafe { libc::adjtimex(&mut t) };
    if state < 0 {
        return None;
    }
    Some(KernelClock {
        state,
        synchronized: state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0,
        status: i64::from(t.status),
        esterror_us: t.esterror as i64,
        maxerror_us: t.maxerror as i64,
    })
}

fn resolve(reference: &str) -> Result<SocketAddr, String> {
    reference
        .to_socket_addrs()
        .map_err(|e| format!("--time-reference {reference}: {e}"))?
        .next()
        .ok_or_else(|| format!("--time-reference {reference}: no address"))
}

/// One exchange on a connected socket: (t1, t2, t3, t4), or None when unanswered.
fn exchange(sock: &UdpSocket, wall: &WallClock, nonce: u64) -> Option<Exchange> {
    let mut req = [0u8; 16];
    req[..4].copy_from_slice(REQUEST);
    req[8..].copy_from_slice(&nonce.to_le_bytes());
    let t1 = wall.now_ns();
    sock.send(&req).ok()?;
    let mut buf = [0u8; 64];
    loop {
        let n = sock.recv(&mut buf).ok()?;
        let t4 = wall.now_ns();
        if n == 32 && &buf[..4] == ANSWER && buf[8..16] == nonce.to_le_bytes() {
            let word = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
            return Some(Exchange {
                t1,
                t2: word(16),
                t3: word(24),
                t4,
            });
        }
        // A late answer to an earlier exchange: keep waiting for this one's.
    }
}

/// `samples` exchanges with the reference; the minimum-delay one is the estimate.
pub fn measure(reference: &str, samples: u32, wall: &WallClock) -> Result<OffsetEstimate, String> {
    let addr = resolve(reference)?;
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse().map_err(|_| "bad address")?
    } else {
        "[::]:0".parse().map_err(|_| "bad address")?
    };
    let sock = UdpSocket::bind(local).map_err(|e| format!("time reference: bind: {e}"))?;
    sock.connect(addr)
        .and_then(|()| sock.set_read_timeout(Some(ANSWER_WAIT)))
        .map_err(|e| format!("--time-reference {reference}: {e}"))?;
    let base = (u64::from(std::process::id()) << 32) | (system_now_ns() & 0xffff_0000);
    let _ = exchange(&sock, wall, base);
    let mut got = Vec::with_capacity(samples as usize);
    for k in 0..samples {
        if let Some(e) = exchange(&sock, wall, base + 1 + u64::from(k)) {
            got.push(e);
        }
        std::thread::sleep(SPACING);
    }
    estimate(&got, reference).ok_or_else(|| {
        format!("--time-reference {reference}: no answer to {samples} exchanges (is `inferbench time-server` running there?)")
    })
}

/// `inferbench time-server`: answers every exchange with its own wall clock, on a thread of
/// its own, until shut down.
pub struct TimeServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TimeServer {
    /// Listens on `addr` (`127.0.0.1:0` picks a port).
    pub fn bind(addr: &str) -> Result<TimeServer, String> {
        let sock = UdpSocket::bind(addr).map_err(|e| format!("--listen {addr}: {e}"))?;
        let local = sock.local_addr().map_err(|e| e.to_string())?;
        // The stop flag is checked between reads.
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .map_err(|e| e.to_string())?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("time-server".into())
            .spawn(move || serve(&sock, &flag))
            .map_err(|e| format!("cannot start the time server: {e}"))?;
        Ok(TimeServer {
            addr: local,
            stop,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    pub fn shutdown(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(sock: &UdpSocket, stop: &AtomicBool) {
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let t2 = system_now_ns();
        if n != 16 || &buf[..4] != REQUEST {
            continue;
        }
        let mut out = [0u8; 32];
        out[..4].copy_from_slice(ANSWER);
        out[8..16].copy_from_slice(&buf[8..16]);
        out[16..24].copy_from_slice(&t2.to_le_bytes());
        let t3 = system_now_ns();
        out[24..32].copy_from_slice(&t3.to_le_bytes());
        let _ = sock.send_to(&out, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_injected_offset_is_measured_within_its_bound() {
        let server = TimeServer::bind("127.0.0.1:0").unwrap();
        let reference = server.addr().to_string();
        // This "host" reads its clock 7 ms ahead: the reference is 7 ms behind it, θ ≈ −7 ms.
        let est = measure(
            &reference,
            16,
            &WallClock {
                offset_ns: 7_000_000,
            },
        )
        .unwrap();
        assert!(est.samples >= 1 && est.samples <= 16);
        assert!(
            (est.offset_ns + 7_000_000).unsigned_abs() <= est.epsilon_ns,
            "{est:?}"
        );
        // Loopback: well under a millisecond of delay.
        assert!(est.delay_ns < 1_000_000, "{est:?}");
        server.shutdown();
    }

    #[test]
    fn no_reference_is_a_one_line_error() {
        // A bound port that never answers.
        let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = quiet.local_addr().unwrap().to_string();
        let e = measure(&addr, 2, &WallClock::default()).unwrap_err();
        assert!(e.contains("no answer to 2 exchanges"), "{e}");
    }

    #[test]
    fn the_kernel_clock_reads_without_privilege() {
        let k = kernel_clock().expect("adjtimex modes=0 is unprivileged");
        assert!((0..=5).contains(&k.state), "{k:?}");
        // Either synchronized with a bound, or flagged unsynchronized.
        assert_eq!(k.bound_ns().is_some(), k.synchronized && k.esterror_us >= 0);
    }
}
