//! A request's connection: the slot's idle one when it is still alive, or a new one; the
//! rule for resending once on a fresh connection; and what `--connection-reuse-strategy`
//! does after a request (docs/faults.md).

use std::sync::atomic::Ordering;

use inferbench_core::connection_plan::ReuseStrategy;

use super::Engine;
use crate::clock::Clock;
use crate::h1::H1Conn;
use crate::resources::Fd;
use crate::transport::{ConnProbes, Target, connect_h1};

/// Keeps the slot's idle connection only if it can carry a request: not ended, not holding
/// an unfinished response, and not closed by the server while idle. Servers such as
/// llama.cpp's close after every streamed response while advertising keep-alive; sending on
/// such a connection fails ("connection closed before message completed"). As curl does,
/// the connection is checked first: nothing left over from the previous response, and a
/// non-blocking peek of the socket, where EOF, an error, or bytes nobody asked for all mean
/// it cannot be reused. Returns whether a connection is kept
/// (the request then reuses it).
pub(super) fn keep_if_alive(conn: &mut Option<H1Conn>) -> bool {
    let Some(c) = conn.as_mut() else {
        return false;
    };
    let alive = !c.done && socket_idle(c.fd);
    if !alive {
        // Dropping it closes the socket.
        *conn = None;
    }
    alive
}

/// The socket holds nothing to read and is not at EOF or in error.
#[cfg(unix)]
fn socket_idle(fd: Fd) -> bool {
    if fd < 0 {
        return true;
    }
    let mut b = [0u8; 1];
    // SAFETY: `fd` is the open socket owned by the connection we hold; one byte is peeked
    // into a local buffer without blocking, and nothing is consumed.
    let n = unsafe {
        libc::recv(
            fd,
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        let e = std::io::Error::last_os_error().raw_os_error();
        return e == Some(libc::EAGAIN) || e == Some(libc::EWOULDBLOCK) || e == Some(libc::EINTR);
    }
    // 0: the server closed it; > 0: bytes before any request (an error page, a TLS alert).
    false
}

#[cfg(not(unix))]
fn socket_idle(_fd: Fd) -> bool {
    true
}

/// A new connection to `target`, numbered in the run's opening order.
pub(super) async fn open(engine: &Engine, target: &Target, clock: Clock) -> Result<H1Conn, String> {
    let probes = ConnProbes {
        sockets: Some(&engine.sockets),
        queues: Some(&engine.queues),
    };
    let mut c = connect_h1(target, clock, probes).await?;
    c.id = engine.next_conn_id.fetch_add(1, Ordering::Relaxed);
    Ok(c)
}

/// Whether a failed attempt is sent again on a fresh connection: only when the connection
/// was reused, the failure was the transport's (never an HTTP status, never a timeout or a
/// cancellation: the caller only asks for transport errors), not one byte of the response
/// had arrived on this attempt, and the request was not resent already. A fresh
/// connection's failure is the server's answer and is recorded as it is.
pub(super) fn resend(reused: bool, bytes_arrived: bool, reconnects: u32) -> bool {
    reused && !bytes_arrived && reconnects == 0
}

/// After a request: `never` closes its connection; `sticky-user-sessions` closes it after a
/// conversation's last turn; `pooled` keeps it for the slot's next request.
pub(super) fn release(strategy: ReuseStrategy, conn: &mut Option<H1Conn>, last_turn: bool) {
    match strategy {
        ReuseStrategy::Pooled => {}
        ReuseStrategy::Never => *conn = None,
        ReuseStrategy::StickyUserSessions if last_turn => *conn = None,
        ReuseStrategy::StickyUserSessions => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resend_only_a_reused_connection_with_no_byte_once() {
        assert!(resend(true, false, 0));
        assert!(
            !resend(false, false, 0),
            "a fresh connection's failure stands"
        );
        assert!(!resend(true, true, 0), "bytes arrived: the failure stands");
        assert!(!resend(true, false, 1), "never twice");
    }

    #[cfg(unix)]
    #[test]
    fn peek_sees_eof_and_unasked_bytes() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        assert!(socket_idle(c.as_raw_fd()), "nothing to read: idle");
        s.write_all(b"x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!socket_idle(c.as_raw_fd()), "bytes nobody asked for");
        let c2 = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s2, _) = l.accept().unwrap();
        drop(s2);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!socket_idle(c2.as_raw_fd()), "EOF");
    }
}
