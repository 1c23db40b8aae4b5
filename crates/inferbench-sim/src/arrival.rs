//! When a request reached the server: the kernel's receive stamp of the last read on its
//! connection (`SO_TIMESTAMPNS`, `inferbench_client::rx_stamp`), not the later moment the
//! server's thread parsed the head. A server that handles 64 requests arriving together
//! parses them one after another; starting each request's clock at its own parse would hide
//! that queueing from the server's TTFT, though every client sees it. With the arrival taken
//! from the kernel, the simulated server's deadlines and its own TTFT count from when the
//! request's bytes arrived (docs/simulated-server.md).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

/// The process's base instant: arrivals are kept as ns after it (0: none yet).
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// The latest read's arrival on one connection.
#[derive(Debug, Default)]
pub(crate) struct ArrivalCell(AtomicU64);

impl ArrivalCell {
    /// The latest read's arrival, never later than now; None before any stamped read.
    pub(crate) fn get(&self) -> Option<Instant> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            ns => Some((base() + std::time::Duration::from_nanos(ns)).min(Instant::now())),
        }
    }

    fn set(&self, at: Instant) {
        let ns = at.saturating_duration_since(base()).as_nanos() as u64;
        self.0.store(ns.max(1), Ordering::Relaxed);
    }
}

/// A plain TCP stream whose reads record their kernel arrival stamp in a cell.
pub(crate) struct ArrivalStream {
    tcp: tokio::net::TcpStream,
    cell: Arc<ArrivalCell>,
    stamped: bool,
}

impl ArrivalStream {
    pub(crate) fn new(tcp: tokio::net::TcpStream, cell: Arc<ArrivalCell>) -> Self {
        base();
        #[cfg(unix)]
        let stamped = inferbench_client::rx_stamp::enable(std::os::fd::AsRawFd::as_raw_fd(&tcp));
        #[cfg(not(unix))]
        let stamped = false;
        ArrivalStream { tcp, cell, stamped }
    }
}

impl tokio::io::AsyncRead for ArrivalStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        #[cfg(unix)]
        if self.stamped {
            use inferbench_client::rx_stamp;
            let before = buf.filled().len();
            let r = std::task::ready!(rx_stamp::poll_recv(&self.tcp, cx, buf));
            if buf.filled().len() > before {
                let now = Instant::now();
                let at = match r.as_ref().ok().copied().flatten() {
                    Some(k) => rx_stamp::to_run_clock(0, rx_stamp::realtime_ns(), k).map_or(
                        now,
                        |(_, lag)| {
                            now.checked_sub(std::time::Duration::from_nanos(lag))
                                .unwrap_or(now)
                        },
                    ),
                    None => now,
                };
                self.cell.set(at);
            }
            return Poll::Ready(r.map(|_| ()));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.cell.set(Instant::now());
        }
        r
    }
}

impl tokio::io::AsyncWrite for ArrivalStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn arrival_is_when_the_bytes_came_not_when_they_were_read() {
        inferbench_client::rx_stamp::warm();
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut c = tokio::net::TcpStream::connect(l.local_addr().unwrap())
            .await
            .unwrap();
        let (s, _) = l.accept().await.unwrap();
        let cell = Arc::new(ArrivalCell::default());
        let mut s = ArrivalStream::new(s, cell.clone());
        assert!(cell.get().is_none(), "no read yet");
        // The kernel switches stamping on lazily (`rx_stamp::warm`).
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        c.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let sent = Instant::now();
        // The server reads 40 ms after the bytes arrived.
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).await.unwrap();
        let read = Instant::now();
        assert_eq!(n, 18);
        let at = cell.get().expect("stamped");
        assert!(
            read - at >= std::time::Duration::from_millis(39),
            "{:?}",
            read - at
        );
        assert!(at + std::time::Duration::from_millis(5) >= sent);
    }
}
