//! The engine's own HTTP/1.1 client connection: one request at a time, its head and body
//! written in one buffer, the response head parsed in place, and the body's frames read
//! straight from the socket in the request's task.
//!
//! Why not hyper here: its HTTP/1 dispatcher hands each body frame to the request's task
//! through a channel, with a waker round trip per frame; against a server that writes every
//! token as its own chunk that hand-off was the largest share of the client's CPU
//! (docs/timing.md, "CPU"). The probes, scrapes and `chat` still use hyper.

pub mod body;
pub mod head;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::resources::Fd;
use crate::transport::{ConnectionSetup, ReadStamp, StampedStream};
use body::{BodyDecoder, Step};
use head::ResponseHead;

/// Bytes asked of each socket read: enough for many frames when they queued up.
const READ_CHUNK: usize = 16 * 1024;

/// How long a failed send waits for an answer the peer may have sent before it stopped
/// reading. A peer that closed without one gives EOF or a reset at once, so this bounds
/// only a connection that failed some other way.
const EARLY_RESPONSE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Why an exchange failed.
#[derive(Debug)]
pub enum H1Error {
    /// The socket failed or closed (with what was happening).
    Io(String),
    /// The peer broke HTTP/1.1 framing.
    Protocol(String),
    /// The request could not be written whole (the peer closed or reset the connection);
    /// an answer it sent first may still be readable ([`H1Conn::early_response`]).
    Send(String),
}

impl std::fmt::Display for H1Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            H1Error::Io(s) | H1Error::Protocol(s) | H1Error::Send(s) => f.write_str(s),
        }
    }
}

/// One HTTP/1.1 connection the engine drives itself.
pub struct H1Conn {
    io: StampedStream,
    buf: BytesMut,
    body: BodyDecoder,
    pub stamp: ReadStamp,
    /// The connection cannot carry another request: it ended, failed, was told to close,
    /// or holds an unfinished response. Set when a request is sent; cleared only when its
    /// response ended with nothing after it on a connection the response kept open.
    pub done: bool,
    /// Name resolution, TCP connect and TLS handshake times.
    pub setup: ConnectionSetup,
    /// The socket, for the idle check (a non-blocking peek for EOF) before reuse.
    pub fd: Fd,
    /// The run's connection number, assigned by the engine when it opened it.
    pub id: u64,
    keep_alive: bool,
    /// Bytes at the front of `buf` lent as the last body frame ([`H1Conn::data`]).
    lent: usize,
}

impl H1Conn {
    pub fn new(io: StampedStream, stamp: ReadStamp, setup: ConnectionSetup, fd: Fd) -> H1Conn {
        H1Conn {
            io,
            buf: BytesMut::with_capacity(READ_CHUNK),
            body: BodyDecoder::new(body::Framing::Empty),
            stamp,
            done: false,
            setup,
            fd,
            id: 0,
            keep_alive: true,
            lent: 0,
        }
    }

    /// Writes a whole request (head and body, from [`head::request`]).
    pub async fn send(&mut self, wire: &[u8]) -> Result<(), H1Error> {
        self.done = true; // until the response is read to its end
        let w = async {
            self.io.write_all(wire).await?;
            self.io.flush().await
        };
        w.await
            .map_err(|e| H1Error::Send(format!("cannot send the request: {e}")))
    }

    /// After a failed send: the response head the peer sent before it stopped reading, if
    /// one is readable within [`EARLY_RESPONSE_WAIT`]. A server or proxy may answer a body it
    /// will not take (413, a size limit) and close: the answer is in the receive buffer,
    /// ahead of the close, and it is the request's result, as hyper reported it. The
    /// connection is not reused either way.
    pub async fn early_response(&mut self) -> Option<ResponseHead> {
        let head = tokio::time::timeout(EARLY_RESPONSE_WAIT, self.response()).await;
        self.keep_alive = false;
        head.ok()?.ok()
    }

    /// One socket read into the buffer; 0 at EOF.
    async fn read_more(&mut self) -> std::io::Result<usize> {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        self.io.read_buf(&mut self.buf).await
    }

    /// Reads the response head. Bytes of the body that came with it stay buffered.
    pub async fn response(&mut self) -> Result<ResponseHead, H1Error> {
        self.drop_lent();
        loop {
            if !self.buf.is_empty() {
                match head::parse_response(&mut self.buf) {
                    Ok(Some(h)) => {
                        self.body = BodyDecoder::new(h.framing);
                        self.keep_alive = h.keep_alive;
                        return Ok(h);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(H1Error::Protocol(e.0)),
                }
            }
            let had = self.buf.len();
            match self.read_more().await {
                Ok(0) if had == 0 => {
                    return Err(H1Error::Io(
                        "connection closed before message completed".into(),
                    ));
                }
                Ok(0) => {
                    return Err(H1Error::Io(format!(
                        "connection closed inside the response head ({had} bytes)"
                    )));
                }
                Ok(_) => {}
                Err(e) => return Err(H1Error::Io(format!("reading the response: {e}"))),
            }
        }
    }

    /// The body's next frame of data (one chunk, or the part of it that has arrived), or
    /// None at its end. At the end the connection is ready for the next request if the
    /// response allowed it. The frame is lent from the read buffer, not split off it: the
    /// next call (or the next response) drops it from the buffer. A split frame made the
    /// buffer shared, and each frame cost a reference count and its release.
    pub async fn data(&mut self) -> Result<Option<&[u8]>, H1Error> {
        self.drop_lent();
        loop {
            match self.body.step(&mut self.buf) {
                Ok(Step::Data(n)) => {
                    self.lent = n;
                    return Ok(Some(&self.buf[..n]));
                }
                Ok(Step::End) => {
                    self.done = !self.keep_alive || !self.buf.is_empty();
                    return Ok(None);
                }
                Ok(Step::NeedMore) => {}
                Err(e) => return Err(H1Error::Protocol(e.0)),
            }
            match self.read_more().await {
                Ok(0) => {
                    self.keep_alive = false;
                    if let Err(e) = self.body.eof() {
                        return Err(H1Error::Io(e.0));
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(H1Error::Io(format!("reading the response body: {e}"))),
            }
        }
    }

    /// Removes the frame the last [`H1Conn::data`] lent from the front of the buffer.
    fn drop_lent(&mut self) {
        if self.lent > 0 {
            self.buf.advance(self.lent);
            self.lent = 0;
        }
    }
}
