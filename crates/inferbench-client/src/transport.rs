//! HTTP transport: a pooled hyper client with `TCP_NODELAY`, TLS for `https://` (docs/tls.md),
//! and a request body that stamps the moment it is handed to the connection.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use hyper_util::rt::TokioIo;

use crate::clock::Clock;
use crate::resources::{Fd, InternalQueues, SocketRegistration, SocketRegistry};
use crate::rx_stamp;

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

// The `/v1/models` probe moved to `probe.rs` (it sends the run's headers now).
pub use crate::probe::fetch_models;

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
/// reached the socket, not the later moment the request's task got to run: with many streams
/// ready at once, that queueing is the largest timing error a client adds. Where the kernel
/// stamps arrivals (`SO_TIMESTAMPNS`, [`crate::rx_stamp`]) the time is the kernel's arrival
/// stamp of the read's last segment; otherwise the read's own time.
///
/// Why the latest read is the right one for a frame: hyper's HTTP/1 dispatcher reads the
/// socket only when the body channel has room, i.e. after the request's task took the
/// previous frame, and the engine drives the connection in that same task, so nothing
/// reads between the task taking a frame and reading this stamp. So the stamp is that of the read that
/// completed the frame (or an earlier one, when one read carried several frames: they then
/// share it, as they arrived together).
#[derive(Clone, Debug)]
pub struct ReadStamp(Arc<StampCell>);

#[derive(Debug, Default)]
struct StampCell {
    t_ns: AtomicU64,
    /// Reads that returned bytes: tells "bytes arrived" apart even when two reads carry the
    /// same time.
    reads: AtomicU64,
}

impl ReadStamp {
    /// The latest read's time, or None before the first read.
    pub fn get(&self) -> Option<u64> {
        match self.0.t_ns.load(Ordering::Relaxed) {
            0 => None,
            t => Some(t),
        }
    }

    /// How many reads returned bytes so far.
    pub fn reads(&self) -> u64 {
        self.0.reads.load(Ordering::Relaxed)
    }
}

/// A connection's byte stream: TCP, or TLS over TCP for an `https://` target. Either way
/// the stamped reads are the TCP socket's (under the TLS layer), so a frame's stamp is when
/// its encrypted bytes left the kernel, not when they were decrypted.
pub struct StampedStream {
    inner: Layer,
}

enum Layer {
    Plain(StampedTcp),
    Tls(Box<tokio_rustls::client::TlsStream<StampedTcp>>),
}

/// A TCP stream that stamps every read that returns bytes.
struct StampedTcp {
    tcp: tokio::net::TcpStream,
    clock: Clock,
    stamp: Arc<StampCell>,
    /// The kernel stamps this socket's arrivals (reads go through `recvmsg`).
    kernel_stamps: bool,
    /// Where each read's lag is counted (the engine's queues), when the engine opened it.
    queues: Option<Arc<InternalQueues>>,
    /// The fd's place in the sampler's socket registry.
    registration: Option<SocketRegistration>,
}

impl Drop for StampedTcp {
    fn drop(&mut self) {
        // Out of the registry before `tcp` closes the fd (fields drop after this), so the
        // sampler never reads a reused fd number as this connection.
        self.registration.take();
    }
}

impl StampedTcp {
    /// A read of `n > 0` bytes just returned, with the kernel's arrival stamp if any.
    fn stamp_read(&self, kernel: Option<u64>) {
        let user_t = self.clock.now_ns();
        let timed = kernel.and_then(|k| rx_stamp::to_run_clock(user_t, rx_stamp::realtime_ns(), k));
        let t = timed.map_or(user_t, |(t, _)| t).max(1);
        // Never before the connection's previous read: a kernel stamp converted to the run's
        // clock can land a few µs before the previous read's own-clock stamp (a read the
        // kernel did not stamp), and frames of one response must not go backwards.
        self.stamp.t_ns.fetch_max(t, Ordering::Relaxed);
        self.stamp.reads.fetch_add(1, Ordering::Relaxed);
        if let Some(q) = &self.queues {
            q.read(timed.map(|(_, lag)| lag));
        }
    }
}

impl tokio::io::AsyncRead for StampedTcp {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        #[cfg(unix)]
        if self.kernel_stamps {
            let before = buf.filled().len();
            let r = std::task::ready!(rx_stamp::poll_recv(&self.tcp, cx, buf));
            if r.is_ok() && buf.filled().len() > before {
                self.stamp_read(r.as_ref().ok().copied().flatten());
            }
            return Poll::Ready(r.map(|_| ()));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.stamp_read(None);
        }
        r
    }
}

impl tokio::io::AsyncWrite for StampedTcp {
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

/// Forwards one I/O call to whichever layer the stream has.
macro_rules! layer {
    ($self:expr, $s:ident => $e:expr) => {
        match &mut $self.inner {
            Layer::Plain($s) => {
                let $s = Pin::new($s);
                $e
            }
            Layer::Tls($s) => {
                let $s = Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl tokio::io::AsyncRead for StampedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        layer!(self, s => s.poll_read(cx, buf))
    }
}

impl tokio::io::AsyncWrite for StampedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        layer!(self, s => s.poll_write(cx, buf))
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        layer!(self, s => s.poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        match &self.inner {
            Layer::Plain(s) => s.is_write_vectored(),
            Layer::Tls(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        layer!(self, s => s.poll_flush(cx))
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        layer!(self, s => s.poll_shutdown(cx))
    }
}

/// Where requests go: the address to connect to, the `Host` header and the request target.
#[derive(Clone, Debug)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub host_header: http::HeaderValue,
    pub path: hyper::Uri,
    /// `path` as written on the request line (origin form, with the query).
    pub path_str: String,
    /// `https://`: the TLS configuration (docs/tls.md), or why it could not be built (every
    /// connection then fails with that line). None: plain HTTP.
    pub tls: Option<Result<Arc<rustls::ClientConfig>, String>>,
}

impl Target {
    /// From a full `http[s]://host[:port]/path[?query]` URI (validated by the caller). An
    /// `https://` URI gets the run's installed TLS configuration ([`crate::tls::current`]).
    pub fn from_uri(uri: &hyper::Uri) -> Target {
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        Target::from_uri_tls(uri, https.then(crate::tls::current))
    }

    /// [`Target::from_uri`] with the TLS configuration given (None: plain HTTP).
    pub fn from_uri_tls(
        uri: &hyper::Uri,
        tls: Option<Result<Arc<rustls::ClientConfig>, String>>,
    ) -> Target {
        let host = uri.host().unwrap_or("localhost").to_string();
        let port = uri
            .port_u16()
            .unwrap_or(if tls.is_some() { 443 } else { 80 });
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
            path_str: path.to_string(),
            path,
            tls,
        }
    }
}

/// How a connection was set up, on the run clock (ns from the anchor); a phase that did not
/// happen is None (no name resolution for an IP address, no TLS on `http://`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectionSetup {
    pub dns_start_ns: Option<u64>,
    pub dns_end_ns: Option<u64>,
    pub connect_start_ns: u64,
    pub connect_end_ns: u64,
    pub tls_start_ns: Option<u64>,
    pub tls_end_ns: Option<u64>,
    /// `TLSv1.3` / `TLSv1.2`.
    pub tls_version: Option<String>,
    /// The negotiated cipher suite's IANA name.
    pub tls_cipher: Option<String>,
}

impl ConnectionSetup {
    /// Into the record's connection evidence (of the request that opened the connection).
    pub fn apply_to(&self, ev: &mut inferbench_core::record::ConnectionEvidence) {
        ev.dns_start_ns = self.dns_start_ns;
        ev.dns_end_ns = self.dns_end_ns;
        ev.connect_start_ns = Some(self.connect_start_ns);
        ev.connect_end_ns = Some(self.connect_end_ns);
        ev.tls_start_ns = self.tls_start_ns;
        ev.tls_end_ns = self.tls_end_ns;
        ev.tls_version = self.tls_version.clone();
        ev.tls_cipher = self.tls_cipher.clone();
    }
}

/// One worker's HTTP/1.1 connection. The worker drives `io` itself, in its own task.
pub struct Conn {
    pub sender: hyper::client::conn::http1::SendRequest<TimedBody>,
    pub io: Pin<Box<hyper::client::conn::http1::Connection<TokioIo<StampedStream>, TimedBody>>>,
    pub stamp: ReadStamp,
    /// The connection ended (closed or failed) or holds an unfinished response.
    pub done: bool,
    /// Name resolution, TCP connect and TLS handshake times.
    pub setup: ConnectionSetup,
    /// The socket, for the engine's idle check (a non-blocking peek for EOF) before reuse.
    pub fd: Fd,
    /// The run's connection number, assigned by the engine when it opened it (0 otherwise).
    pub id: u64,
}

/// Open a connection (`TCP_NODELAY`, reads stamped, TLS for `https://`) and hand-shake
/// HTTP/1.1.
pub async fn connect(target: &Target, clock: Clock) -> Result<Conn, String> {
    connect_registered(target, clock, ConnProbes::default()).await
}

/// What an engine's connection reports to: the sampler's socket registry (the fd is in it for
/// as long as the connection is open) and the queues that count every read's lag.
#[derive(Clone, Copy, Default)]
pub struct ConnProbes<'a> {
    pub sockets: Option<&'a SocketRegistry>,
    pub queues: Option<&'a Arc<InternalQueues>>,
}

/// [`connect`], reporting to `probes`.
pub async fn connect_registered(
    target: &Target,
    clock: Clock,
    probes: ConnProbes<'_>,
) -> Result<Conn, String> {
    let s = open_stream(target, clock, probes).await?;
    let io = TokioIo::new(s.stream);
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
        stamp: s.stamp,
        done: false,
        setup: s.setup,
        fd: s.fd,
        id: 0,
    })
}

/// The engine's connection: the same stream as [`connect_registered`], driven by the
/// engine's own HTTP/1.1 client ([`crate::h1`]).
pub async fn connect_h1(
    target: &Target,
    clock: Clock,
    probes: ConnProbes<'_>,
) -> Result<crate::h1::H1Conn, String> {
    let s = open_stream(target, clock, probes).await?;
    Ok(crate::h1::H1Conn::new(s.stream, s.stamp, s.setup, s.fd))
}

/// An open byte stream and what was measured while opening it.
struct Opened {
    stream: StampedStream,
    stamp: ReadStamp,
    setup: ConnectionSetup,
    fd: Fd,
}

/// Resolve, connect (`TCP_NODELAY`, reads stamped) and, for `https://`, hand-shake TLS.
async fn open_stream(
    target: &Target,
    clock: Clock,
    probes: ConnProbes<'_>,
) -> Result<Opened, String> {
    let at = format!("{}:{}", target.host, target.port);
    let bare = target.host.trim_start_matches('[').trim_end_matches(']');
    let mut setup = ConnectionSetup::default();
    // Resolved here, not inside `TcpStream::connect`, so that resolution is timed apart.
    let addrs: Vec<std::net::SocketAddr> = match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![(ip, target.port).into()],
        Err(_) => {
            setup.dns_start_ns = Some(clock.now_ns());
            let found = tokio::net::lookup_host((bare, target.port))
                .await
                .map_err(|e| format!("cannot resolve {}: {e}", target.host))?
                .collect();
            setup.dns_end_ns = Some(clock.now_ns());
            found
        }
    };
    setup.connect_start_ns = clock.now_ns();
    let mut last = None;
    let mut tcp = None;
    for a in &addrs {
        match tokio::net::TcpStream::connect(a).await {
            Ok(t) => {
                tcp = Some(t);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let tcp = match (tcp, last) {
        (Some(t), _) => t,
        (None, Some(e)) => return Err(format!("cannot connect to {at}: {e}")),
        (None, None) => return Err(format!("cannot connect to {at}: no address found")),
    };
    setup.connect_end_ns = clock.now_ns();
    tcp.set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY on {at}: {e}"))?;
    let stamp = Arc::new(StampCell::default());
    let fd = raw_fd(&tcp);
    let registration = probes.sockets.map(|r| r.register(raw_fd(&tcp)));
    let tcp = StampedTcp {
        tcp,
        clock,
        stamp: stamp.clone(),
        kernel_stamps: rx_stamp::enable(fd),
        queues: probes.queues.cloned(),
        registration,
    };
    let inner = match &target.tls {
        None => Layer::Plain(tcp),
        Some(Err(e)) => return Err(format!("TLS to {at}: {e}")),
        Some(Ok(cfg)) => {
            let name = crate::tls::server_name(&target.host)?;
            setup.tls_start_ns = Some(clock.now_ns());
            let s = tokio_rustls::TlsConnector::from(cfg.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| {
                    let hint = crate::tls_self_signed::hint(&e);
                    format!("TLS handshake with {at}: {}{hint}", error_chain(&e))
                })?;
            setup.tls_end_ns = Some(clock.now_ns());
            let (_, session) = s.get_ref();
            setup.tls_version = session.protocol_version().map(crate::tls::version_name);
            setup.tls_cipher = session.negotiated_cipher_suite().map(|c| {
                c.suite()
                    .as_str()
                    .map_or_else(|| format!("{:?}", c.suite()), str::to_string)
            });
            Layer::Tls(Box::new(s))
        }
    };
    Ok(Opened {
        stream: StampedStream { inner },
        stamp: ReadStamp(stamp),
        setup,
        fd,
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
