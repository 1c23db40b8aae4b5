//! The client's own TCP connections (telemetry.md §4.4–4.5). A persistent non-zero Recv-Q
//! (bytes arrived that the client has not read) is the key "client is not keeping up" sign.
//!
//! The transport registers each connection's fd when it is made and removes it before the fd
//! is closed; the sampler holds the registry's lock while it reads, so a closed fd number
//! that the kernel hands out again is never read as ours. Per connection one `FIONREAD`
//! (Recv-Q), `SIOCOUTQ` (send queue), `SIOCOUTQNSD` (not yet sent) and `TCP_INFO` (rtt,
//! retransmits; only fields below the returned length are trusted): a few syscalls of a few
//! hundred ns each. Only maxima and counts are kept, never every reading.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

/// A raw fd (an `i32` on Linux).
pub type Fd = i32;

/// One reading of one socket; None where the call failed or the kernel did not return the
/// field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketReading {
    /// `FIONREAD`: bytes received and not yet read by us (Recv-Q).
    pub recv_q: Option<u32>,
    /// `SIOCOUTQ`: bytes not yet acknowledged by the peer, unsent included (Send-Q).
    pub out_q: Option<u32>,
    /// `SIOCOUTQNSD`, else `tcpi_notsent_bytes`: bytes not yet sent.
    pub notsent: Option<u32>,
    /// `tcpi_rtt`, µs (smoothed).
    pub rtt_us: Option<u32>,
    /// `tcpi_total_retrans`.
    pub total_retrans: Option<u32>,
}

/// Reads one socket. Best effort: a failed call leaves its field None.
#[cfg(target_os = "linux")]
pub fn read_socket(fd: Fd) -> SocketReading {
    // Not in every libc target's constants; the value is the kernel's (linux/sockios.h).
    const SIOCOUTQNSD: libc::Ioctl = 0x894B;
    let ioctl_u32 = |req: libc::Ioctl| -> Option<u32> {
        let mut v: libc::c_int = 0;
        // SAFETY: these three ioctls write one int through the pointer, which is valid.
        let r = unsafe { libc::ioctl(fd, req, &mut v as *mut libc::c_int) };
        (r == 0 && v >= 0).then_some(v as u32)
    };
    let mut r = SocketReading {
        recv_q: ioctl_u32(libc::FIONREAD),
        out_q: ioctl_u32(libc::TIOCOUTQ),
        notsent: ioctl_u32(SIOCOUTQNSD),
        ..SocketReading::default()
    };
    // SAFETY: tcp_info is plain integers; all-zero is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the buffer and its length are valid; the kernel writes at most `len` bytes and
    // sets `len` to what it wrote.
    let ok = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut libc::tcp_info as *mut libc::c_void,
            &mut len,
        )
    } == 0;
    if ok {
        // Fields were appended over kernel versions: trust one only if it lies below `len`.
        let has = |offset: usize| offset + std::mem::size_of::<u32>() <= len as usize;
        if has(std::mem::offset_of!(libc::tcp_info, tcpi_rtt)) {
            r.rtt_us = Some(info.tcpi_rtt);
        }
        if has(std::mem::offset_of!(libc::tcp_info, tcpi_total_retrans)) {
            r.total_retrans = Some(info.tcpi_total_retrans);
        }
        if r.notsent.is_none() && has(std::mem::offset_of!(libc::tcp_info, tcpi_notsent_bytes)) {
            r.notsent = Some(info.tcpi_notsent_bytes);
        }
    }
    r
}

#[cfg(not(target_os = "linux"))]
pub fn read_socket(_fd: Fd) -> SocketReading {
    SocketReading::default()
}

/// What one connection showed over its life (or until now).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionStats {
    /// Registration order, from 0.
    pub id: u64,
    pub reads: u64,
    /// Readings with Recv-Q > 0.
    pub recv_q_nonzero: u64,
    pub recv_q_max: u32,
    pub out_q_max: u32,
    pub notsent_max: u32,
    /// Growth of `tcpi_total_retrans` between this connection's first and last reading.
    pub retrans: u64,
    pub rtt_us_max: Option<u32>,
}

/// The sockets at one resource sample: `*_total` are cumulative since the registry was
/// made (window deltas are differences), the rest cover the readings since the previous
/// sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketSample {
    /// Connections registered now.
    pub open: u32,
    pub opened_total: u64,
    /// Sweeps over every open connection (the resource interval and the faster socket rate).
    pub sweeps_total: u64,
    /// Time spent in those sweeps, ns (what reading the sockets costs).
    pub sweep_ns_total: u64,
    /// Per-connection readings.
    pub reads_total: u64,
    pub recv_q_nonzero_total: u64,
    /// Readings with Recv-Q > 0 whose previous reading of the same connection (one socket
    /// interval earlier) had Recv-Q > 0 too: bytes left unread across readings, not bytes
    /// that had just arrived.
    #[serde(default)]
    pub recv_q_persistent_total: u64,
    pub retrans_total: u64,
    pub recv_q_max: u32,
    pub out_q_max: u32,
    pub notsent_max: u32,
    /// Median and max of `tcpi_rtt` over the readings since the previous sample, µs.
    pub rtt_us_p50: Option<u32>,
    pub rtt_us_max: Option<u32>,
}

struct Entry {
    fd: Fd,
    stats: ConnectionStats,
    last_retrans: Option<u32>,
    /// The previous reading of this connection had Recv-Q > 0.
    last_nonzero: bool,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    open: Vec<Entry>,
    /// Stats of closed connections, the first [`KEEP_CLOSED`].
    closed: Vec<ConnectionStats>,
    totals: SocketSample,
    rtts: Vec<u32>,
}

/// Closed connections whose stats are kept (a run with connection churn makes many).
const KEEP_CLOSED: usize = 4096;

/// The client's open connections, shared by the transport (register, drop) and the sampler.
#[derive(Clone, Default)]
pub struct SocketRegistry(Arc<Mutex<Table>>);

impl std::fmt::Debug for SocketRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketRegistry").finish_non_exhaustive()
    }
}

/// A registered connection; dropping it removes the fd from the registry. It must be dropped
/// before the fd is closed.
#[derive(Debug)]
pub struct SocketRegistration {
    registry: SocketRegistry,
    id: u64,
}

impl Drop for SocketRegistration {
    fn drop(&mut self) {
        let mut t = self.registry.lock();
        if let Some(i) = t.open.iter().position(|e| e.stats.id == self.id) {
            let e = t.open.swap_remove(i);
            if t.closed.len() < KEEP_CLOSED {
                t.closed.push(e.stats);
            }
        }
    }
}

impl SocketRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock leaves plain counters: still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers an open connection's fd.
    pub fn register(&self, fd: Fd) -> SocketRegistration {
        let mut t = self.lock();
        let id = t.next_id;
        t.next_id += 1;
        t.totals.opened_total += 1;
        t.open.push(Entry {
            fd,
            stats: ConnectionStats {
                id,
                ..ConnectionStats::default()
            },
            last_retrans: None,
            last_nonzero: false,
        });
        SocketRegistration {
            registry: self.clone(),
            id,
        }
    }

    /// Reads every open connection once (under the lock, so none closes meanwhile) and
    /// folds the readings in.
    pub fn sweep(&self) {
        let started = std::time::Instant::now();
        let mut guard = self.lock();
        let t = &mut *guard;
        for e in &mut t.open {
            let r = read_socket(e.fd);
            let s = &mut e.stats;
            s.reads += 1;
            t.totals.reads_total += 1;
            let recv = r.recv_q.unwrap_or(0);
            if recv > 0 {
                s.recv_q_nonzero += 1;
                t.totals.recv_q_nonzero_total += 1;
                if e.last_nonzero {
                    t.totals.recv_q_persistent_total += 1;
                }
            }
            e.last_nonzero = recv > 0;
            s.recv_q_max = s.recv_q_max.max(recv);
            t.totals.recv_q_max = t.totals.recv_q_max.max(recv);
            let out = r.out_q.unwrap_or(0);
            s.out_q_max = s.out_q_max.max(out);
            t.totals.out_q_max = t.totals.out_q_max.max(out);
            let notsent = r.notsent.unwrap_or(0);
            s.notsent_max = s.notsent_max.max(notsent);
            t.totals.notsent_max = t.totals.notsent_max.max(notsent);
            if let Some(rtt) = r.rtt_us {
                s.rtt_us_max = Some(s.rtt_us_max.map_or(rtt, |m| m.max(rtt)));
                t.rtts.push(rtt);
            }
            if let Some(now) = r.total_retrans {
                let grew = u64::from(now.saturating_sub(e.last_retrans.unwrap_or(now)));
                s.retrans += grew;
                t.totals.retrans_total += grew;
                e.last_retrans = Some(now);
            }
        }
        t.totals.sweeps_total += 1;
        t.totals.sweep_ns_total += started.elapsed().as_nanos() as u64;
    }

    /// Sweeps once more and returns the sample; the since-previous-sample maxima restart.
    pub fn sample(&self) -> SocketSample {
        self.sweep();
        let mut t = self.lock();
        let mut out = t.totals.clone();
        out.open = u32::try_from(t.open.len()).unwrap_or(u32::MAX);
        if !t.rtts.is_empty() {
            let n = t.rtts.len();
            t.rtts.sort_unstable();
            // The lower median: an observed value, no interpolation.
            out.rtt_us_p50 = Some(t.rtts[(n - 1) / 2]);
            out.rtt_us_max = t.rtts.last().copied();
        }
        t.rtts.clear();
        t.totals.recv_q_max = 0;
        t.totals.out_q_max = 0;
        t.totals.notsent_max = 0;
        out
    }

    /// Every connection seen, open ones included, in registration order.
    pub fn connections(&self) -> Vec<ConnectionStats> {
        let t = self.lock();
        let mut v: Vec<ConnectionStats> = t
            .closed
            .iter()
            .cloned()
            .chain(t.open.iter().map(|e| e.stats.clone()))
            .collect();
        v.sort_by_key(|c| c.id);
        v
    }
}
