//! HTTP transport: a pooled hyper client with `TCP_NODELAY`, and a request body that stamps
//! the moment it is handed to the connection.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper_util::rt::TokioIo;

use crate::clock::Clock;
use crate::resources::{Fd, SocketRegistration, SocketRegistry};

/// A one-shot request body that records (ns from the run anchor) when its bytes were taken
/// by the connection: the closest observable point to "request sent" without a custom I/O.
pub struct TimedBody {
    data: Option<Bytes>,
    clock: Clock,
    sent_ns: Arc<AtomicU64>,
}

impl TimedBody {
    pub fn new(data: Bytes, clock: Clock, sent_ns: Arc<AtomicU64>) -> Self {
        TimedBody {
            data: Some(data),
            clock,
            sent_ns,
        }
    }

    pub fn empty(clock: Clock) -> Self {
        TimedBody {
            data: None,
            clock,
            sent_ns: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.data.take() {
            Some(d) => {
                self.sent_ns.store(self.clock.now_ns(), Ordering::Relaxed);
                Poll::Ready(Some(Ok(Frame::data(d))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

/// `GET {base}/v1/models`, for the manifest's server identity, on a connection of its own
/// made as the engine makes them. `Ok(None)` when the server answered but not with JSON (or
/// not 2xx); `Err` only when it could not be reached at all, so that an unreachable `--url`
/// fails before the run with one clear line.
pub async fn fetch_models(
    clock: Clock,
    base_url: &str,
    timeout: Duration,
) -> Result<Option<serde_json::Value>, String> {
    let uri: hyper::Uri = format!("{}/v1/models", base_url.trim_end_matches('/'))
        .parse()
        .map_err(|e| format!("invalid URL {base_url:?}: {e}"))?;
    let target = Target::from_uri(&uri);
    let probe = async {
        let Conn { mut sender, io, .. } = connect(&target, clock).await?;
        // The probe's connection is driven by its own task; it ends with the sender.
        tokio::spawn(async move {
            let _ = io.await;
        });
        let req = hyper::Request::get(target.path.clone())
            .header(http::header::HOST, target.host_header.clone())
            .header(
                http::header::USER_AGENT,
                concat!("inferbench/", env!("CARGO_PKG_VERSION")),
            )
            .body(TimedBody::empty(clock))
            .map_err(|e| e.to_string())?;
        // Reached, but no usable answer: not an error, just no identity to record.
        let Ok(resp) = sender.send_request(req).await else {
            return Ok(None);
        };
        if !resp.status().is_success() {
            return Ok(None);
        }
        Ok(match resp.into_body().collect().await {
            Ok(b) => serde_json::from_slice(&b.to_bytes()).ok(),
            Err(_) => None,
        })
    };
    match tokio::time::timeout(timeout, probe).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer from {base_url} within {timeout:?}")),
    }
}

/// An error and its sources, joined: hyper's top-level messages alone ("client error
/// (Connect)") do not say what happened.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// Time (ns from the run anchor) of the latest socket read that returned bytes on one
/// connection ([`Conn::stamp`]), so that a body frame is stamped with the moment its bytes
/// left the kernel, not the later moment the request's task got to run: with many streams
/// ready at once, that queueing is the largest timing error a client adds.
///
/// Why the latest read is the right one for a frame: hyper's HTTP/1 dispatcher reads the
/// socket only when the body channel has room, i.e. after the request's task took the
/// previous frame, and the engine drives the connection in that same task, so nothing
/// reads between the task taking a frame and reading this stamp. So the stamp is that of the read that
/// completed the frame (or an earlier one, when one read carried several frames: they then
/// share it, as they arrived together).
#[derive(Clone, Debug)]
pub struct ReadStamp(Arc<AtomicU64>);

impl ReadStamp {
    /// The latest read's time, or None before the first read.
    pub fn get(&self) -> Option<u64> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            t => Some(t),
        }
    }
}

/// A TCP stream that stamps every read that returns bytes.
pub struct StampedStream {
    tcp: tokio::net::TcpStream,
    clock: Clock,
    stamp: Arc<AtomicU64>,
    /// The fd's place in the sampler's socket registry.
    registration: Option<SocketRegistration>,
}

impl Drop for StampedStream {
    fn drop(&mut self) {
        // Out of the registry before `tcp` closes the fd (fields drop after this), so the
        // sampler never reads a reused fd number as this connection.
        self.registration.take();
    }
}

impl tokio::io::AsyncRead for StampedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let t = self.clock.now_ns().max(1);
            self.stamp.store(t, Ordering::Relaxed);
        }
        r
    }
}

impl tokio::io::AsyncWrite for StampedStream {
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

/// Where requests go: the address to connect to, the `Host` header and the request target.
#[derive(Clone, Debug)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub host_header: http::HeaderValue,
    pub path: hyper::Uri,
}

impl Target {
    /// From a full `http://host[:port]/path[?query]` URI (validated by the caller).
    pub fn from_uri(uri: &hyper::Uri) -> Target {
        let host = uri.host().unwrap_or("localhost").to_string();
        let port = uri.port_u16().unwrap_or(80);
        let authority = uri
            .authority()
            .map_or_else(|| host.clone(), |a| a.as_str().to_string());
        let path = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .unwrap_or_else(|_| hyper::Uri::from_static("/"));
        Target {
            host,
            port,
            host_header: http::HeaderValue::from_str(&authority)
                .unwrap_or_else(|_| http::HeaderValue::from_static("localhost")),
            path,
        }
    }
}

/// One worker's HTTP/1.1 connection. The worker drives `io` itself, in its own task.
pub struct Conn {
    pub sender: hyper::client::conn::http1::SendRequest<TimedBody>,
    pub io: Pin<Box<hyper::client::conn::http1::Connection<TokioIo<StampedStream>, TimedBody>>>,
    pub stamp: ReadStamp,
    /// The connection ended (closed or failed) or holds an unfinished response.
    pub done: bool,
    /// The socket, for the engine's idle check (a non-blocking peek for EOF) before reuse.
    pub fd: Fd,
    /// The run's connection number, assigned by the engine when it opened it (0 otherwise).
    pub id: u64,
}

/// Open a connection (`TCP_NODELAY`, reads stamped) and hand-shake HTTP/1.1.
pub async fn connect(target: &Target, clock: Clock) -> Result<Conn, String> {
    connect_registered(target, clock, None).await
}

/// [`connect`], with the connection's fd in `sockets` (when given) for as long as it is open.
pub async fn connect_registered(
    target: &Target,
    clock: Clock,
    sockets: Option<&SocketRegistry>,
) -> Result<Conn, String> {
    let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("cannot connect to {}:{}: {e}", target.host, target.port))?;
    tcp.set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY on {}:{}: {e}", target.host, target.port))?;
    let stamp = Arc::new(AtomicU64::new(0));
    let fd = raw_fd(&tcp);
    let registration = sockets.map(|r| r.register(raw_fd(&tcp)));
    let io = TokioIo::new(StampedStream {
        tcp,
        clock,
        stamp: stamp.clone(),
        registration,
    });
    let (sender, conn) = hyper::client::conn::http1::Builder::new()
        .handshake(io)
        .await
        .map_err(|e| {
            format!(
                "HTTP/1.1 handshake with {}:{}: {e}",
                target.host, target.port
            )
        })?;
    Ok(Conn {
        sender,
        io: Box::pin(conn),
        stamp: ReadStamp(stamp),
        done: false,
        fd,
        id: 0,
    })
}

#[cfg(unix)]
fn raw_fd(tcp: &tokio::net::TcpStream) -> Fd {
    std::os::fd::AsRawFd::as_raw_fd(tcp)
}

#[cfg(not(unix))]
fn raw_fd(_tcp: &tokio::net::TcpStream) -> Fd {
    -1
}
