//! A fast path for the common chat and completions chunk: a hand-written reader of the JSON
//! subset servers send for a token (`{"id":…,"choices":[{"index":0,"delta":{"content":"…"},
//! "finish_reason":null}]}`), producing the same [`Wire`] that serde would.
//!
//! It declines (returns `None`) on anything outside that subset, and the caller then parses
//! with serde as before, so its answer is serde's answer or no answer: a backslash or a
//! control byte in any string, a key given twice, a text field that is neither a string nor
//! `null`, tool calls, a top level that is not an object, nesting deeper than [`MAX_DEPTH`],
//! anything that is not JSON. Per streamed token this is most of the decoder's cost, which
//! is why it exists (docs/timing.md, "CPU").

use std::borrow::Cow;

use super::{Choice, FirstChoice, Message, Raw, Text, Wire};

/// Deeper values are left to serde (whose own limit is 128).
const MAX_DEPTH: u32 = 64;

/// The chunk as serde would read it, written into `w` (which must be [`empty`]); false when
/// the fast path declines, `w` then holding whatever it had read. Written in place: a
/// `Wire` is 144 bytes, and returning one was a `memcpy` call a chunk. With a `memo`, a
/// chunk that begins with the bytes the memo holds starts reading after them, and a chunk
/// read whole leaves its leading fields in the memo for the next one.
pub(super) fn wire_into<'a>(data: &'a str, w: &mut Wire<'a>, memo: Option<&mut Memo>) -> bool {
    let mut p = Reader {
        s: data,
        b: data.as_bytes(),
        i: 0,
    };
    let start = memo.as_deref().and_then(|m| m.resume(p.b));
    let Some(cut) = p.wire(w, start) else {
        return false;
    };
    p.ws();
    if p.i != p.b.len() {
        return false;
    }
    if let Some(m) = memo {
        m.hits += u64::from(start.is_some());
        if let Some(c) = cut {
            m.keep(&p.b[..c.at], c);
        }
    }
    true
}

/// A stream's chunks repeat their leading fields (`{"id":…,"object":…,"created":…,"model":…,`
/// from vLLM, SGLang, TensorRT-LLM and the simulated server), about half of each chunk's
/// bytes. The memo holds those bytes as the last chunk read whole had them, up to the comma
/// after its last leading field, with what reading them left behind: the keys seen and where
/// `object`'s text lies. A leading field is one the reader only checks (`object`, or a key
/// it skips); the first `choices`, `usage`, `error` or `message` ends them. The reader is
/// a function of the bytes it has read, so a chunk whose first bytes are the memo's is, after
/// them, in the very state the memo recorded, and its answer is the same as read whole.
#[derive(Debug, Default)]
pub(super) struct Memo {
    prefix: Vec<u8>,
    state: Cut,
    /// Chunks that started after the memo's bytes (for the tests).
    pub(super) hits: u64,
}

/// Where the leading fields end, and the reader's state there.
#[derive(Clone, Copy, Debug, Default)]
struct Cut {
    at: usize,
    seen: u8,
    /// `object`'s text as a byte range, when it was a string.
    object: Option<(usize, usize)>,
}

impl Memo {
    fn keep(&mut self, prefix: &[u8], cut: Cut) {
        self.prefix.clear();
        self.prefix.extend_from_slice(prefix);
        self.state = cut;
    }

    /// The state after the memo's bytes, when `b` begins with them.
    fn resume(&self, b: &[u8]) -> Option<Cut> {
        (!self.prefix.is_empty() && b.starts_with(&self.prefix)).then_some(self.state)
    }
}

/// The chunk as serde would read it, or `None` when the fast path declines.
#[cfg(test)]
pub(super) fn wire(data: &str) -> Option<Wire<'_>> {
    let mut w = empty();
    wire_into(data, &mut w, None).then_some(w)
}

/// A `Wire` with no field set, as serde's defaults leave it.
pub(super) fn empty<'a>() -> Wire<'a> {
    Wire {
        object: Text::default(),
        choices: None,
        usage: None,
        error: None,
        message: Text::default(),
    }
}

struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

/// Marks a key as seen; a second time declines (serde rejects duplicate fields).
fn first_time(seen: &mut u8, bit: u8) -> Option<()> {
    (*seen & bit == 0).then(|| *seen |= bit)
}

impl<'a> Reader<'a> {
    /// The top-level object into `w`, from its start or from a memo's `start`; with the
    /// leading fields' end when it read them itself (see [`Memo`]).
    fn wire(&mut self, w: &mut Wire<'a>, start: Option<Cut>) -> Option<Option<Cut>> {
        let mut seen = 0u8;
        let mut object = None;
        // Still among the leading fields, whose end is worth remembering.
        let mut leading = true;
        let mut cut = None;
        if let Some(c) = start {
            if let Some((from, to)) = c.object {
                w.object = Text(Some(Cow::Borrowed(&self.s[from..to])));
            }
            (self.i, seen, object, leading) = (c.at, c.seen, c.object, false);
        } else {
            self.expect(b'{')?;
            if self.peek()? == b'}' {
                self.i += 1;
                return Some(None);
            }
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            match key {
                "object" => {
                    first_time(&mut seen, 1)?;
                    w.object = self.text()?;
                    object = w.object.0.as_deref().map(|t| {
                        let start = t.as_ptr() as usize - self.s.as_ptr() as usize;
                        (start, start + t.len())
                    });
                }
                "choices" => {
                    first_time(&mut seen, 2)?;
                    leading = false;
                    w.choices = self.choices()?;
                }
                "usage" => {
                    first_time(&mut seen, 4)?;
                    leading = false;
                    w.usage = self.raw()?;
                }
                "error" => {
                    first_time(&mut seen, 8)?;
                    leading = false;
                    w.error = self.raw()?;
                }
                "message" => {
                    first_time(&mut seen, 16)?;
                    leading = false;
                    w.message = self.text()?;
                }
                _ => self.skip(1)?,
            }
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    if leading {
                        cut = Some(Cut {
                            at: self.i,
                            seen,
                            object,
                        });
                    }
                }
                b'}' => {
                    self.i += 1;
                    return Some(cut);
                }
                _ => return None,
            }
        }
    }

    /// `null` or an array whose first element is a choice object (the rest are skipped).
    fn choices(&mut self) -> Option<Option<FirstChoice<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.expect(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(Some(FirstChoice(None)));
        }
        let first = self.choice()?;
        loop {
            match self.peek()? {
                b']' => {
                    self.i += 1;
                    return Some(Some(FirstChoice(Some(first))));
                }
                b',' => {
                    self.i += 1;
                    self.skip(2)?;
                }
                _ => return None,
            }
        }
    }

    fn choice(&mut self) -> Option<Choice<'a>> {
        let mut c = Choice {
            delta: None,
            message: None,
            text: Text::default(),
            finish_reason: Text::default(),
        };
        let mut seen = 0u8;
        self.object(|p, key| {
            match key {
                "delta" => {
                    first_time(&mut seen, 1)?;
                    c.delta = p.message()?;
                }
                "message" => {
                    first_time(&mut seen, 2)?;
                    c.message = p.message()?;
                }
                "text" => {
                    first_time(&mut seen, 4)?;
                    c.text = p.text()?;
                }
                "finish_reason" => {
                    first_time(&mut seen, 8)?;
                    c.finish_reason = p.text()?;
                }
                _ => p.skip(2)?,
            }
            Some(())
        })?;
        Some(c)
    }

    /// `null` or a message object without tool calls.
    fn message(&mut self) -> Option<Option<Box<Message<'a>>>> {
        if self.null() {
            return Some(None);
        }
        let mut m = Message {
            content: Text::default(),
            reasoning_content: Text::default(),
            reasoning: Text::default(),
            tool_calls: None,
        };
        let mut seen = 0u8;
        self.object(|p, key| {
            match key {
                "content" => {
                    first_time(&mut seen, 1)?;
                    m.content = p.text()?;
                }
                "reasoning_content" => {
                    first_time(&mut seen, 2)?;
                    m.reasoning_content = p.text()?;
                }
                "reasoning" => {
                    first_time(&mut seen, 4)?;
                    m.reasoning = p.text()?;
                }
                "tool_calls" => {
                    first_time(&mut seen, 8)?;
                    // Present tool calls are rare: serde reads them.
                    if !p.null() {
                        return None;
                    }
                }
                _ => p.skip(3)?,
            }
            Some(())
        })?;
        Some(Some(Box::new(m)))
    }

    /// An object, calling `field` with the reader positioned at each key's value.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A text field: a string or `null`.
    fn text(&mut self) -> Option<Text<'a>> {
        if self.null() {
            return Some(Text(None));
        }
        Some(Text(Some(Cow::Borrowed(self.string()?))))
    }

    /// `usage` or `error`: `null`, or the value's own text, checked as JSON by `skip`.
    fn raw(&mut self) -> Option<Option<Raw<'a>>> {
        if self.null() {
            return Some(None);
        }
        let start = self.i;
        self.skip(1)?;
        Some(Some(Raw(&self.s[start..self.i])))
    }

    /// Any value, checked as JSON; `depth` is its nesting level.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|p, _| p.skip(depth + 1)),
            b'[' => {
                self.i += 1;
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.skip(depth + 1)?;
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    /// A string without escapes or control bytes (the rest decline); the input is a `&str`,
    /// so the bytes between the quotes are UTF-8 and end on a character boundary.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.i;
        let len = string_stop(&self.b[start..])?;
        if self.b[start + len] != b'"' {
            return None;
        }
        self.i = start + len + 1;
        Some(&self.s[start..start + len])
    }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            self.require_digits()?;
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.require_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
    }

    fn require_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..]
            .starts_with(word)
            .then(|| self.i += word.len())
    }

    /// Consumes `null` if it is next.
    fn null(&mut self) -> bool {
        self.peek() == Some(b'n') && self.literal(b"null").is_some()
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// The next byte after whitespace.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
}

/// Index of the first `"`, `\\` or control byte (< 0x20) in `b`, eight bytes at a time.
fn string_stop(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Sets the high bit of each byte of `w` below `n` (n <= 128). A borrow can also mark a
    // byte above a marked one, never below, so the lowest mark is always a true one.
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH;
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hits = below(w ^ (ONES * u64::from(b'"')), 1)
            | below(w ^ (ONES * u64::from(b'\\')), 1)
            | below(w, 0x20);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|k| i + k)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn string_stop_is_the_first_stop_byte(
            b in prop::collection::vec(prop_oneof![
                8 => 0x20u8..=0xff,
                1 => Just(b'"'),
                1 => Just(b'\\'),
                1 => 0u8..0x20,
            ], 0..40)
        ) {
            let want = b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
            prop_assert_eq!(super::string_stop(&b), want);
        }
    }
}
