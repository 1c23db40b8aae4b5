//! Incremental Server-Sent Events parser working on raw body bytes.
//!
//! Follows the WHATWG EventSource "interpreting an event stream" rules:
//!
//! - a line ends with `\r\n`, `\n` or `\r`; a `\r` that ends one chunk and a `\n` that starts
//!   the next are one line end, so the result never depends on where the transport split frames;
//! - `field: value` (one optional space after the colon is removed), or `field` alone, meaning
//!   an empty value; lines starting with `:` are comments;
//! - `data` lines are joined with `\n`; `event` names the message; `id` sets the last event id,
//!   which (as in the spec) persists across messages until another `id` line changes it;
//!   `retry` with only ASCII digits sets the reconnection time; other fields are ignored;
//! - a blank line dispatches the message; a message without any `data` line is dropped;
//! - one UTF-8 byte order mark at the very start of the stream is skipped.
//!
//! Representation choices: an empty `event` or `id` value is reported as `None` (the spec's
//! default type "message" and "no id"). Field values that are not valid UTF-8 are converted
//! lossily (each bad sequence becomes U+FFFD) line by line, after the whole line has been
//! assembled, so a multi-byte character split across chunks is still decoded correctly.
//!
//! An unterminated message at the end of the stream is not dispatched (the spec discards it);
//! [`SseParser::finish`] reports it as a [`Leftover`] so the caller can flag a cut stream.

use std::borrow::Cow;

use memchr::{memchr, memchr2};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched SSE message.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SseMessage {
    /// The `event` field, if the message set a non-empty one.
    pub event: Option<String>,
    /// All `data` lines of the message joined with `\n`.
    pub data: String,
    /// The last event id in force when the message was dispatched (non-empty).
    pub id: Option<String>,
}

/// What was left unfinished when the stream ended: bytes after the last blank line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Bytes received after the last message boundary (blank line) or stream start, BOM excluded.
    pub bytes: usize,
    /// The pending message had at least one complete `data` line: a real event was cut.
    /// When false, only comments, other fields or a partial line were pending.
    pub has_data: bool,
    /// The stream ended in the middle of a line (no line terminator after the last bytes).
    pub partial_line: bool,
}

/// Incremental SSE parser. Feed body chunks with [`push`](Self::push) in arrival order and call
/// [`finish`](Self::finish) at the end of the body; `finish` also resets the parser so that it
/// (and its buffers) can be reused for the next response.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line not yet terminated (only copied when a line spans chunks). While the BOM
    /// check is undecided it holds the first (at most 3) bytes of the stream.
    line: Vec<u8>,
    msg: Pending,
    /// The stream start has been examined for a BOM.
    bom_done: bool,
    /// The previous chunk ended with `\r`: a `\n` at the start of the next chunk belongs to it.
    after_cr: bool,
    /// Bytes since the last blank line, for [`Leftover::bytes`].
    pending_bytes: usize,
}

/// State of the message being assembled, kept apart from `line` so that a buffered line can be
/// handed to it without copying.
#[derive(Debug, Default)]
struct Pending {
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<u64>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `chunk` and appends to `out` every message completed by it, in stream order.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<SseMessage>) {
        if chunk.is_empty() {
            return;
        }
        if !self.bom_done {
            // Gather up to 3 bytes before deciding, since a BOM may itself be split.
            let take = (BOM.len() - self.line.len()).min(chunk.len());
            self.line.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.line == BOM {
                self.line.clear();
            } else if BOM.starts_with(&self.line) {
                // Still a BOM prefix: then the whole chunk went into `line`.
                return;
            } else {
                let head = std::mem::take(&mut self.line);
                self.bom_done = true;
                self.feed(&head, out);
            }
            self.bom_done = true;
        }
        self.feed(chunk, out);
    }

    /// Ends the stream: returns what was pending after the last complete message, if anything,
    /// and resets the parser for reuse. The pending message itself is discarded, as the spec says.
    pub fn finish(&mut self) -> Option<Leftover> {
        let bytes = if self.bom_done {
            self.pending_bytes
        } else {
            self.line.len()
        };
        let leftover = (bytes > 0).then_some(Leftover {
            bytes,
            has_data: self.msg.has_data,
            partial_line: !self.line.is_empty(),
        });
        self.reset();
        leftover
    }

    /// Forgets all state (including the last event id), keeping buffer capacity.
    pub fn reset(&mut self) {
        self.line.clear();
        self.msg.data.clear();
        self.msg.has_data = false;
        self.msg.event = None;
        self.msg.last_id = None;
        self.msg.retry = None;
        self.bom_done = false;
        self.after_cr = false;
        self.pending_bytes = 0;
    }

    /// Hands back a dispatched message's `data` once the caller is done with it: its buffer
    /// holds the next message's data, so a stream does not allocate and free one a message.
    /// Dropped when a message is already being gathered into a buffer of its own.
    pub fn recycle(&mut self, mut data: String) {
        if self.msg.data.capacity() == 0 {
            data.clear();
            self.msg.data = data;
        }
    }

    /// The reconnection time (ms) from the last valid `retry` field, if any.
    pub fn retry(&self) -> Option<u64> {
        self.msg.retry
    }

    /// The current last event id (set by `id` lines; persists across messages).
    pub fn last_event_id(&self) -> Option<&str> {
        self.msg.last_id.as_deref()
    }

    fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseMessage>) {
        if chunk.is_empty() {
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
                // Count it like the whole-stream parse would: part of a pending line's end,
                // or part of the blank line that already closed the message.
                if self.pending_bytes > 0 {
                    self.pending_bytes += 1;
                }
            }
        }
        let mut pos = 0;
        let mut boundary = 0;
        while let Some(i) = memchr2(b'\n', b'\r', &chunk[pos..]) {
            let end = pos + i;
            let blank = if self.line.is_empty() {
                // Common case: the whole line is inside this chunk; no copy.
                self.msg.line(&chunk[pos..end], out)
            } else {
                self.line.extend_from_slice(&chunk[pos..end]);
                let blank = self.msg.line(&self.line, out);
                self.line.clear();
                blank
            };
            pos = end + 1;
            if chunk[end] == b'\r' {
                if pos < chunk.len() {
                    if chunk[pos] == b'\n' {
                        pos += 1;
                    }
                } else {
                    self.after_cr = true;
                }
            }
            if blank {
                boundary = pos;
                self.pending_bytes = 0;
            }
        }
        self.line.extend_from_slice(&chunk[pos..]);
        self.pending_bytes += chunk.len() - boundary;
    }
}

impl Pending {
    /// Processes one complete line (without its terminator). Returns true for a blank line.
    fn line(&mut self, line: &[u8], out: &mut Vec<SseMessage>) -> bool {
        if line.is_empty() {
            self.dispatch(out);
            return true;
        }
        if line[0] == b':' {
            return false;
        }
        let (name, value) = match memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                // The strict check first: it is much faster on valid text, the usual case.
                match std::str::from_utf8(value) {
                    Ok(v) => self.data.push_str(v),
                    Err(_) => self.data.push_str(&String::from_utf8_lossy(value)),
                }
            }
            b"event" => self.event = non_empty(value),
            // The spec ignores ids containing NUL.
            b"id" if memchr(0, value).is_none() => self.last_id = non_empty(value),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // All digits, so only overflow can fail: an absurd value is ignored too.
                let ms = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                self.retry = ms.or(self.retry);
            }
            _ => {}
        }
        false
    }

    fn dispatch(&mut self, out: &mut Vec<SseMessage>) {
        if !self.has_data {
            self.event = None;
            return;
        }
        self.has_data = false;
        out.push(SseMessage {
            event: self.event.take(),
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
        });
    }
}

fn non_empty(value: &[u8]) -> Option<String> {
    if value.is_empty() {
        None
    } else {
        Some(match String::from_utf8_lossy(value) {
            Cow::Borrowed(s) => s.to_owned(),
            Cow::Owned(s) => s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_whole(bytes: &[u8]) -> (Vec<SseMessage>, Option<Leftover>) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(bytes, &mut out);
        let left = p.finish();
        (out, left)
    }

    fn data(s: &str) -> SseMessage {
        SseMessage {
            data: s.into(),
            ..Default::default()
        }
    }

    #[test]
    fn typical_chat_stream() {
        let stream = b"data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n";
        let (out, left) = parse_whole(stream);
        assert_eq!(
            out,
            vec![data("{\"a\":1}"), data("{\"a\":2}"), data("[DONE]")]
        );
        assert_eq!(left, None);
    }

    #[test]
    fn all_line_end_styles() {
        let (out, _) = parse_whole(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n");
        assert_eq!(out, vec![data("a"), data("b"), data("c")]);
    }

    #[test]
    fn cr_lf_split_across_chunks_is_one_line_end() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"data: a\r", &mut out);
        p.push(b"\ndata: b\r", &mut out);
        // Had the `\n` been a second line end, "a" would have been dispatched alone.
        assert!(out.is_empty());
        p.push(b"\n\r", &mut out);
        assert_eq!(out, vec![data("a\nb")]);
        p.push(b"\n", &mut out);
        assert_eq!(p.finish(), None);
    }

    #[test]
    fn multi_line_data_event_and_id() {
        let (out, _) = parse_whole(b"event: update\nid: 7\ndata: x\ndata\ndata:  y\n\ndata: z\n\n");
        assert_eq!(
            out,
            vec![
                SseMessage {
                    event: Some("update".into()),
                    data: "x\n\n y".into(),
                    id: Some("7".into()),
                },
                // The id persists; the event name does not.
                SseMessage {
                    event: None,
                    data: "z".into(),
                    id: Some("7".into()),
                },
            ]
        );
    }

    #[test]
    fn empty_id_clears_and_nul_id_is_ignored() {
        let (out, _) = parse_whole(b"id: 1\ndata: a\n\nid: 2\0\ndata: b\n\nid\ndata: c\n\n");
        let ids: Vec<_> = out.iter().map(|m| m.id.as_deref()).collect();
        assert_eq!(ids, vec![Some("1"), Some("1"), None]);
    }

    #[test]
    fn comments_unknown_fields_and_no_data_messages() {
        let (out, left) =
            parse_whole(b": keep-alive\n\nevent: ping\n\nfoo: bar\ndata:x\n: note\n\n");
        // The `event: ping` message has no data: dropped, and its name does not leak.
        assert_eq!(out, vec![data("x")]);
        assert_eq!(left, None);
    }

    #[test]
    fn empty_data_line_is_dispatched_with_empty_data() {
        let (out, _) = parse_whole(b"data:\n\ndata\n\n");
        assert_eq!(out, vec![data(""), data("")]);
    }

    #[test]
    fn colon_in_value_and_only_one_space_removed() {
        let (out, _) = parse_whole(b"data:  a: b\n\n");
        assert_eq!(out, vec![data(" a: b")]);
    }

    #[test]
    fn retry_field() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"retry: 1500\nretry: 12x\n\n", &mut out);
        assert_eq!(p.retry(), Some(1500));
        assert!(out.is_empty());
    }

    #[test]
    fn bom_is_skipped_once_even_when_split() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"\xEF", &mut out);
        p.push(b"\xBB", &mut out);
        p.push(b"\xBFdata: a\n\n", &mut out);
        assert_eq!(out, vec![data("a")]);
        // A second BOM is not at stream start: it is part of the field name, so ignored.
        let (out, _) = parse_whole(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n");
        assert_eq!(out, vec![data("b")]);
    }

    #[test]
    fn short_streams_that_look_like_a_bom_start() {
        let (out, left) = parse_whole(b"\xEF\xBB");
        assert!(out.is_empty());
        assert_eq!(
            left,
            Some(Leftover {
                bytes: 2,
                has_data: false,
                partial_line: true
            })
        );
        let (out, _) = parse_whole(b"d\n\n");
        assert_eq!(out, vec![]);
        let (out, _) = parse_whole(b"\n\n");
        assert_eq!(out, vec![]);
    }

    #[test]
    fn invalid_utf8_is_lossy_and_split_chars_survive() {
        let (out, _) = parse_whole(b"data: a\xFFb\n\n");
        assert_eq!(out, vec![data("a\u{FFFD}b")]);
        // "é" is C3 A9: split between two chunks it must still decode.
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"data: \xC3", &mut out);
        p.push(b"\xA9\n\n", &mut out);
        assert_eq!(out, vec![data("é")]);
    }

    #[test]
    fn cut_stream_reports_leftover() {
        // Mid-line cut: `data: {"choi` is 12 bytes after the last boundary.
        let (out, left) = parse_whole(b"data: a\n\ndata: {\"choi");
        assert_eq!(out, vec![data("a")]);
        assert_eq!(
            left,
            Some(Leftover {
                bytes: 12,
                has_data: false,
                partial_line: true
            })
        );
        // Complete data line but no blank line: a cut event with data.
        let (out, left) = parse_whole(b"data: a\r\n");
        assert!(out.is_empty());
        assert_eq!(
            left,
            Some(Leftover {
                bytes: 9,
                has_data: true,
                partial_line: false
            })
        );
    }

    #[test]
    fn finish_resets_for_reuse() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.push(b"id: 3\ndata: a\n\ndata: partial", &mut out);
        assert!(p.finish().is_some());
        p.push(b"\xEF\xBB\xBFdata: b\n\n", &mut out);
        assert_eq!(p.finish(), None);
        assert_eq!(
            out,
            vec![
                SseMessage {
                    event: None,
                    data: "a".into(),
                    id: Some("3".into())
                },
                data("b")
            ]
        );
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        let stream: &[u8] =
            b"\xEF\xBB\xBF: hi\r\nevent: e\rdata: 1\r\ndata: 2\r\r\nid: x\ndata:3\n\ndata: cut";
        let (whole, whole_left) = parse_whole(stream);
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for b in stream {
            p.push(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(out, whole);
        assert_eq!(p.finish(), whole_left);
        assert_eq!(
            whole,
            vec![
                SseMessage {
                    event: Some("e".into()),
                    data: "1\n2".into(),
                    id: None
                },
                SseMessage {
                    event: None,
                    data: "3".into(),
                    id: Some("x".into())
                },
            ]
        );
    }
}
