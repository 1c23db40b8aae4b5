//! An HTTP/1.1 response body's framing (RFC 9112 §6.3, §7.1): a known length, chunked, or
//! up to the connection's close. A pure step function over the bytes read so far, so that
//! it is tested and fuzzed without a socket.

use bytes::{Buf, BytesMut};

/// The longest chunk-size line (with its extensions) or trailer line we accept: a peer
/// that never ends a line must not make us buffer without bound.
pub const MAX_LINE: usize = 16 * 1024;

/// How a body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body at all (1xx, 204, 304).
    Empty,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Neither: the body runs to the connection's close (which cannot then be reused).
    Close,
}

/// What the bytes at hand allow next.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// The first `n` bytes of the buffer are body data (n > 0); take them before stepping.
    Data(usize),
    /// More bytes are needed.
    NeedMore,
    /// The body ended; the buffer's first byte (if any) is past it.
    End,
}

/// A body that broke its framing, or ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyError(pub String);

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// Before a chunk-size line.
    Size,
    /// Inside a chunk with this much data left.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last (zero) chunk: trailer lines up to an empty one.
    Trailer,
}

/// The state of one response body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyDecoder {
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Length(u64),
    Chunked(Chunk),
    Close,
    Done,
}

impl BodyDecoder {
    pub fn new(framing: Framing) -> BodyDecoder {
        let state = match framing {
            Framing::Empty | Framing::Length(0) => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::Chunked(Chunk::Size),
            Framing::Close => State::Close,
        };
        BodyDecoder { state }
    }

    /// The body ended (its last byte was stepped past).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consume framing bytes from the front of `buf` and say what comes next. After
    /// `Data(n)` the caller removes those `n` bytes before the next step.
    pub fn step(&mut self, buf: &mut BytesMut) -> Result<Step, BodyError> {
        loop {
            match self.state {
                State::Done => return Ok(Step::End),
                State::Close => {
                    return Ok(if buf.is_empty() {
                        Step::NeedMore
                    } else {
                        Step::Data(buf.len())
                    });
                }
                State::Length(left) => {
                    if buf.is_empty() {
                        return Ok(Step::NeedMore);
                    }
                    let n = left.min(buf.len() as u64);
                    let rest = left - n;
                    self.state = if rest == 0 {
                        State::Done
                    } else {
                        State::Length(rest)
                    };
                    return Ok(Step::Data(n as usize));
                }
                State::Chunked(Chunk::Data(left)) => {
                    if buf.is_empty() {
                        return Ok(Step::NeedMore);
                    }
                    let n = left.min(buf.len() as u64);
                    let rest = left - n;
                    self.state = State::Chunked(if rest == 0 {
                        Chunk::DataEnd
                    } else {
                        Chunk::Data(rest)
                    });
                    return Ok(Step::Data(n as usize));
                }
                State::Chunked(Chunk::DataEnd) => {
                    // CRLF (a bare LF is taken too, as lenient parsers do).
                    match buf.first() {
                        None => return Ok(Step::NeedMore),
                        Some(b'\n') => buf.advance(1),
                        Some(b'\r') => match buf.get(1) {
                            None => return Ok(Step::NeedMore),
                            Some(b'\n') => buf.advance(2),
                            Some(_) => return Err(bad("a chunk's data is not followed by CRLF")),
                        },
                        Some(_) => return Err(bad("a chunk's data is not followed by CRLF")),
                    }
                    self.state = State::Chunked(Chunk::Size);
                }
                State::Chunked(Chunk::Size) => {
                    let Some(size) = take_line(buf, chunk_size)? else {
                        return Ok(Step::NeedMore);
                    };
                    let size = size?;
                    self.state = State::Chunked(if size == 0 {
                        Chunk::Trailer
                    } else {
                        Chunk::Data(size)
                    });
                }
                State::Chunked(Chunk::Trailer) => {
                    let Some(empty) = take_line(buf, <[u8]>::is_empty)? else {
                        return Ok(Step::NeedMore);
                    };
                    if empty {
                        self.state = State::Done;
                    }
                }
            }
        }
    }

    /// The connection closed: the body ends here if its framing allows, else the error
    /// that says where it was cut.
    pub fn eof(&mut self) -> Result<(), BodyError> {
        match self.state {
            State::Done => Ok(()),
            State::Close => {
                self.state = State::Done;
                Ok(())
            }
            State::Length(left) => Err(BodyError(format!(
                "the connection closed {left} bytes before the end of the body (Content-Length)"
            ))),
            State::Chunked(_) => Err(bad(
                "the connection closed inside a chunked body (before its last chunk)",
            )),
        }
    }
}

fn bad(s: &str) -> BodyError {
    BodyError(format!("invalid chunked body: {s}"))
}

/// `read` of one line from the front of `buf`, without its CRLF (or bare LF), and the line
/// removed; None while incomplete. Read in place: splitting the line off made the buffer
/// shared, a reference count per chunk.
fn take_line<R>(buf: &mut BytesMut, read: impl FnOnce(&[u8]) -> R) -> Result<Option<R>, BodyError> {
    match memchr::memchr(b'\n', buf) {
        // The same limit for a line that arrived whole as for one still arriving.
        Some(i) if i > MAX_LINE => Err(bad("a chunk-size or trailer line is too long")),
        Some(i) => {
            let line = &buf[..i];
            let r = read(line.strip_suffix(b"\r").unwrap_or(line));
            buf.advance(i + 1);
            Ok(Some(r))
        }
        None if buf.len() > MAX_LINE => Err(bad("a chunk-size or trailer line is too long")),
        None => Ok(None),
    }
}

/// The hex size at the front of a chunk-size line (extensions after `;` are ignored).
fn chunk_size(line: &[u8]) -> Result<u64, BodyError> {
    let mut size: u64 = 0;
    let mut digits = 0;
    let mut rest = line;
    while let Some((&b, tail)) = rest.split_first() {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => break,
        };
        size = size
            .checked_mul(16)
            .map(|s| s + u64::from(d))
            .ok_or_else(|| bad("a chunk size overflows 64 bits"))?;
        digits += 1;
        rest = tail;
    }
    if digits == 0 {
        return Err(bad("a chunk-size line does not start with a hex size"));
    }
    // Optional whitespace, then nothing or extensions.
    let rest = rest.trim_ascii_start();
    if !rest.is_empty() && rest[0] != b';' {
        return Err(bad("a chunk-size line holds something other than a size"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `wire` in the given pieces; returns the data and whether the body ended.
    fn decode(framing: Framing, pieces: &[&[u8]]) -> Result<(Vec<u8>, bool, usize), BodyError> {
        let mut d = BodyDecoder::new(framing);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        let mut frames = 0;
        let mut pieces = pieces.iter();
        loop {
            match d.step(&mut buf)? {
                Step::Data(n) => {
                    assert!(n > 0 && n <= buf.len());
                    out.extend_from_slice(&buf.split_to(n));
                    frames += 1;
                }
                Step::End => return Ok((out, true, frames)),
                Step::NeedMore => match pieces.next() {
                    Some(p) => buf.extend_from_slice(p),
                    None => {
                        d.eof()?;
                        return Ok((out, d.is_done(), frames));
                    }
                },
            }
        }
    }

    #[test]
    fn chunked_by_hand() {
        let wire: &[u8] = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-T: 1\r\n\r\n";
        let (data, done, frames) = decode(Framing::Chunked, &[wire]).unwrap();
        assert_eq!(data, b"hello, world");
        assert!(done);
        assert_eq!(frames, 2, "one frame per chunk when each arrived whole");
        // Split inside the size line, the data and the CRLF: a chunk split across reads
        // comes out as two frames, as it arrives.
        let (data, done, frames) = decode(
            Framing::Chunked,
            &[b"5\r", b"\nhel", b"lo\r", b"\n0\r\n", b"\r\n"],
        )
        .unwrap();
        assert_eq!((data.as_slice(), done, frames), (&b"hello"[..], true, 2));
        // Upper-case hex, a bare LF and whitespace before an extension.
        let (data, _, _) = decode(Framing::Chunked, &[b"A ;x\nabcdefghij\n0\n\n"]).unwrap();
        assert_eq!(data, b"abcdefghij");
    }

    #[test]
    fn bytes_after_the_body_stay_in_the_buffer() {
        let mut d = BodyDecoder::new(Framing::Chunked);
        let mut buf = BytesMut::from(&b"1\r\nx\r\n0\r\n\r\nHTTP/1.1"[..]);
        assert_eq!(d.step(&mut buf).unwrap(), Step::Data(1));
        let _ = buf.split_to(1);
        assert_eq!(d.step(&mut buf).unwrap(), Step::End);
        assert_eq!(&buf[..], b"HTTP/1.1");
        let mut d = BodyDecoder::new(Framing::Length(3));
        let mut buf = BytesMut::from(&b"abcdef"[..]);
        assert_eq!(d.step(&mut buf).unwrap(), Step::Data(3));
        let _ = buf.split_to(3);
        assert_eq!(d.step(&mut buf).unwrap(), Step::End);
        assert_eq!(&buf[..], b"def");
    }

    #[test]
    fn early_close_and_broken_framing_are_errors() {
        let e = decode(Framing::Chunked, &[b"5\r\nhel"]).unwrap_err();
        assert!(e.0.contains("inside a chunked body"), "{e}");
        let e = decode(Framing::Length(10), &[b"hello"]).unwrap_err();
        assert_eq!(
            e.0,
            "the connection closed 5 bytes before the end of the body (Content-Length)"
        );
        assert!(decode(Framing::Chunked, &[b"zz\r\n"]).is_err());
        assert!(decode(Framing::Chunked, &[b"5x\r\nhello\r\n"]).is_err());
        assert!(decode(Framing::Chunked, &[b"2\r\nabXY0\r\n\r\n"]).is_err());
        assert!(
            decode(Framing::Chunked, &[b"\r\n"]).is_err(),
            "an empty size line"
        );
        assert!(decode(Framing::Chunked, &[b"10000000000000000\r\n"]).is_err());
        let long = vec![b'1'; MAX_LINE + 2];
        assert!(decode(Framing::Chunked, &[&long]).is_err());
        // Up to the close: the close ends it.
        let (data, done, _) = decode(Framing::Close, &[b"ab", b"cd"]).unwrap();
        assert_eq!((data.as_slice(), done), (&b"abcd"[..], true));
        let (data, done, frames) = decode(Framing::Empty, &[b"ignored"]).unwrap();
        assert_eq!((data.len(), done, frames), (0, true, 0));
    }

    /// Chunked encoding of `chunks` (with optional extensions), cut at `cuts`.
    fn encode(chunks: &[Vec<u8>], ext: bool) -> Vec<u8> {
        let mut w = Vec::new();
        for c in chunks.iter().filter(|c| !c.is_empty()) {
            w.extend_from_slice(format!("{:x}", c.len()).as_bytes());
            if ext {
                w.extend_from_slice(b";n=v");
            }
            w.extend_from_slice(b"\r\n");
            w.extend_from_slice(c);
            w.extend_from_slice(b"\r\n");
        }
        w.extend_from_slice(b"0\r\n\r\n");
        w
    }

    fn cut<'a>(wire: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut at: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
        at.sort_unstable();
        let mut pieces = Vec::new();
        let mut prev = 0;
        for a in at.into_iter().chain([wire.len()]) {
            pieces.push(&wire[prev..a]);
            prev = a;
        }
        pieces
    }

    proptest! {
        /// Whatever the chunking and however the bytes arrive, the data comes back whole,
        /// in order, and the body ends exactly at its last byte.
        #[test]
        fn chunked_round_trips(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12),
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
            ext in any::<bool>(),
        ) {
            let mut wire = encode(&chunks, ext);
            let body_len = wire.len();
            wire.extend_from_slice(b"NEXT");
            let (data, done, _) = decode(Framing::Chunked, &cut(&wire[..body_len], &cuts)).unwrap();
            prop_assert!(done);
            prop_assert_eq!(data, chunks.concat());
            // With the next response's bytes behind it, they are left alone.
            let mut d = BodyDecoder::new(Framing::Chunked);
            let mut buf = BytesMut::from(&wire[..]);
            loop {
                match d.step(&mut buf).unwrap() {
                    Step::Data(n) => { let _ = buf.split_to(n); }
                    Step::End => break,
                    Step::NeedMore => prop_assert!(false, "all bytes were there"),
                }
            }
            prop_assert_eq!(&buf[..], b"NEXT");
        }

        /// A body cut anywhere before its end is an error, never a clean end.
        #[test]
        fn a_cut_chunked_body_is_an_error(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..50), 1..5),
            at in any::<usize>(),
        ) {
            let wire = encode(&chunks, false);
            let at = at % wire.len();
            prop_assert!(decode(Framing::Chunked, &[&wire[..at]]).is_err());
        }

        /// Arbitrary bytes never panic and never yield more data than was given.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            cuts in proptest::collection::vec(any::<usize>(), 0..6),
        ) {
            if let Ok((data, _, _)) = decode(Framing::Chunked, &cut(&bytes, &cuts)) {
                prop_assert!(data.len() <= bytes.len());
            }
        }
    }
}
