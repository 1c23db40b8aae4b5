//! Kernel receive timestamps (`SO_TIMESTAMPNS`): the moment a segment reached the socket,
//! taken by the kernel, not the later moment the client's thread got round to `read()` it.
//!
//! Why: one client thread serves every connection. When many streams' frames arrive at once
//! (64 first tokens of 64 lockstep streams), the thread reads the sockets one after another,
//! and a user-space stamp taken after `read()` puts the client's own queueing into the
//! server's measured latency. The kernel stamp does not move with the client's load. The
//! difference between the two (the *read lag*) is kept as evidence that the client kept up
//! (docs/timing.md, "Kernel receive timestamps").
//!
//! The kernel stamps in `CLOCK_REALTIME`; the run clock is monotonic. A stamp becomes run
//! time as `t = user_t − (realtime_now − kernel_stamp)`: only the lag, a short interval, is
//! taken from the wall clock, read right after `user_t`. A lag below zero (the wall clock
//! stepped back) or above [`MAX_LAG_NS`] (stepped forward) is not trusted: the read then keeps
//! its user-space time and counts as not kernel-stamped.

use std::mem::MaybeUninit;

/// The longest lag believed; longer means the wall clock stepped, not that the client slept.
pub const MAX_LAG_NS: u64 = 10_000_000_000;

/// Asks the kernel to stamp every segment this socket receives. False when it cannot (not
/// Linux, or the option is refused): reads are then stamped in user space as before.
#[cfg(target_os = "linux")]
pub fn enable(fd: i32) -> bool {
    if fd < 0 {
        return false;
    }
    let on: libc::c_int = 1;
    // SAFETY: `fd` is an open socket owned by the caller; the option value is a local int
    // whose size is passed with it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    r == 0
}

#[cfg(not(target_os = "linux"))]
pub fn enable(_fd: i32) -> bool {
    false
}

/// Turns the kernel's receive stamping on for the whole process, ahead of the first
/// connection. Linux stamps segments only while some socket asks for stamps, and it switches
/// that on lazily (a deferred work item) when the first such socket appears: a connection
/// opened right then would see its first segments unstamped. One UDP socket that asks for
/// stamps, opened once and kept for the life of the process, keeps it on.
pub fn warm() {
    static KEEP: std::sync::OnceLock<Option<std::net::UdpSocket>> = std::sync::OnceLock::new();
    KEEP.get_or_init(|| {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").ok()?;
        #[cfg(unix)]
        let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
        #[cfg(not(unix))]
        let fd = -1;
        enable(fd).then_some(s)
    });
}

/// One `recvmsg` into `buf`: the bytes read and, when the kernel attached one, the
/// `CLOCK_REALTIME` ns at which the last segment consumed by this read arrived. A would-block
/// is returned as the `io::Error` it is (the caller clears readiness).
#[cfg(target_os = "linux")]
pub fn recv(fd: i32, buf: &mut [MaybeUninit<u8>]) -> std::io::Result<(usize, Option<u64>)> {
    // Room for one `SCM_TIMESTAMPNS` (a timespec) with headroom, 8-byte aligned as cmsg needs.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is a valid empty header; the pointers set below point at
    // `iov` and `control`, which outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `fd` is an open socket; `buf` is writable for `buf.len()` bytes (uninitialised
    // bytes are fine: the kernel only writes them); `msg` is a valid header for this call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the kernel filled `msg_control`/`msg_controllen`; the CMSG_* walk stays inside
    // them, and the timespec is read unaligned from the cmsg's data.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                if ts.tv_sec > 0 && ts.tv_nsec >= 0 {
                    stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, stamp))
}

#[cfg(not(target_os = "linux"))]
pub fn recv(_fd: i32, _buf: &mut [MaybeUninit<u8>]) -> std::io::Result<(usize, Option<u64>)> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Reads what `tcp` has into `buf` with one `recvmsg` once it is readable (a tokio
/// `poll_read` that keeps the kernel's stamp): `Ready(Ok(Some(stamp)))` when bytes came with
/// a stamp, `Ready(Ok(None))` when they came without one or at EOF (nothing added to `buf`).
#[cfg(unix)]
pub fn poll_recv(
    tcp: &tokio::net::TcpStream,
    cx: &mut std::task::Context<'_>,
    buf: &mut tokio::io::ReadBuf<'_>,
) -> std::task::Poll<std::io::Result<Option<u64>>> {
    use std::task::Poll;
    let fd = std::os::fd::AsRawFd::as_raw_fd(tcp);
    loop {
        std::task::ready!(tcp.poll_read_ready(cx))?;
        // SAFETY: the bytes `recv` reports are initialised by the kernel before
        // `assume_init`; nothing is read from the uninitialised part.
        let unfilled = unsafe { buf.unfilled_mut() };
        let room = unfilled.len();
        // A read that left room in the buffer drained the socket, so the next one would only
        // say EAGAIN: readiness is cleared now instead, as tokio's own `poll_read` does on
        // epoll (the next arrival is a new edge). `try_io` clears it only on `WouldBlock`,
        // so the read's result is kept aside and `WouldBlock` handed back to it. Half of all
        // `recvmsg` calls were such EAGAINs against a server that writes every token.
        let mut got = None;
        let r = tcp.try_io(tokio::io::Interest::READABLE, || {
            let (n, kernel) = recv(fd, unfilled)?;
            got = Some((n, kernel));
            if n > 0 && n < room {
                Err(std::io::ErrorKind::WouldBlock.into())
            } else {
                Ok(())
            }
        });
        if let Some((n, kernel)) = got {
            // SAFETY: `recv` wrote `n` bytes at the start of the unfilled part.
            unsafe { buf.assume_init(n) };
            buf.advance(n);
            return Poll::Ready(Ok(if n > 0 { kernel } else { None }));
        }
        match r {
            // Readiness was cleared by `try_io`: wait for the next.
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => return Poll::Ready(Err(e)),
            _ => continue,
        }
    }
}

/// The wall clock now, ns since the Unix epoch (the kernel stamps' clock).
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A read's run-clock time and lag: `user_t` is the run clock right after the read, `now_real`
/// the wall clock read just after it, `kernel` the kernel's stamp. Some((t, lag)) when the
/// lag is believable (module docs), None when the read keeps `user_t`.
pub fn to_run_clock(user_t: u64, now_real: u64, kernel: u64) -> Option<(u64, u64)> {
    let lag = now_real.checked_sub(kernel)?;
    if lag > MAX_LAG_NS {
        return None;
    }
    Some((user_t.saturating_sub(lag), lag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_taken_off_the_user_time() {
        // Read 250 µs after the segment arrived: the frame is 250 µs earlier than the read.
        assert_eq!(
            to_run_clock(
                10_000_000,
                1_700_000_000_000_250_000,
                1_700_000_000_000_000_000
            ),
            Some((9_750_000, 250_000))
        );
        // A stamp in the wall clock's future (it stepped back): not believed.
        assert_eq!(to_run_clock(10_000_000, 1_000, 2_000), None);
        // More than 10 s of lag (it stepped forward): not believed.
        assert_eq!(
            to_run_clock(10_000_000, 20_000_000_001, 10_000_000_000),
            None
        );
        // Exactly 10 s is believed; a lag longer than the run clock saturates at 0.
        assert_eq!(
            to_run_clock(5, 20_000_000_000, 10_000_000_000),
            Some((0, 10_000_000_000))
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_stamps_arrival_not_the_read() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        warm();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert!(enable(c.as_raw_fd()));
        let (mut s, _) = l.accept().unwrap();
        // The kernel switches stamping on lazily (see `warm`); give it time to.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let before = realtime_ns();
        s.write_all(b"hello").unwrap();
        // The client reads 30 ms after the bytes arrived.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let mut buf = [MaybeUninit::<u8>::uninit(); 16];
        let (n, stamp) = recv(c.as_raw_fd(), &mut buf).unwrap();
        let after = realtime_ns();
        assert_eq!(n, 5);
        let k = stamp.expect("a kernel stamp");
        assert!(
            k + 1_000_000 >= before,
            "stamped at arrival, not before the write"
        );
        assert!(
            after - k >= 30_000_000,
            "the 30 ms wait is lag, not latency"
        );
        // Nothing more to read: would-block, not EOF.
        let e = recv(c.as_raw_fd(), &mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    }
}
