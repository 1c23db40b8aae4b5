//! Property tests of the SSE parser: however a stream is split into chunks, the parser yields
//! the same messages as for the whole stream, and those are the messages that were generated.

use inferbench_protocol::sse::{Leftover, SseMessage, SseParser};
use proptest::prelude::*;
use proptest::sample::Index;

#[derive(Clone, Debug)]
enum Field {
    Data(String),
    Event(String),
    Id(String),
    Retry(u32),
    Comment(String),
    Unknown(&'static str, String),
}

#[derive(Clone, Debug)]
struct Line {
    field: Field,
    /// Write `name: value` rather than `name:value` (forced when the value starts with a space).
    space: bool,
    /// Write a bare `name` when the value is empty.
    bare: bool,
    end: usize,
}

#[derive(Clone, Debug)]
struct Msg {
    lines: Vec<Line>,
    blank_end: usize,
}

const ENDS: [&str; 3] = ["\n", "\r", "\r\n"];

fn value() -> impl Strategy<Value = String> {
    // Characters that stress the parser: colons, spaces, NUL, multi-byte UTF-8, a BOM char.
    let chars = vec!['a', 'b', ' ', ':', 'é', '\0', '😀', '\u{FEFF}', '{', '"'];
    prop::collection::vec(prop::sample::select(chars), 0..8).prop_map(String::from_iter)
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![
        4 => value().prop_map(Field::Data),
        1 => value().prop_map(Field::Event),
        1 => value().prop_map(Field::Id),
        1 => any::<u32>().prop_map(Field::Retry),
        1 => value().prop_map(Field::Comment),
        1 => (prop::sample::select(vec!["foo", "dat", "datax", "Data", "ev"]), value())
            .prop_map(|(n, v)| Field::Unknown(n, v)),
    ]
}

fn line() -> impl Strategy<Value = Line> {
    (field(), any::<bool>(), any::<bool>(), 0..3usize).prop_map(|(field, space, bare, end)| Line {
        field,
        space,
        bare,
        end,
    })
}

fn msg() -> impl Strategy<Value = Msg> {
    (prop::collection::vec(line(), 0..6), 0..3usize)
        .prop_map(|(lines, blank_end)| Msg { lines, blank_end })
}

/// A tail after the last message: none, a complete data line without the blank line, or a
/// partial line.
fn tail() -> impl Strategy<Value = Option<(String, bool)>> {
    prop::option::of(
        (value(), any::<bool>()).prop_map(|(v, complete)| (format!("data: {v}"), complete)),
    )
}

/// Serializes the stream: optional BOM, the messages, then the optional tail.
fn render(bom: bool, msgs: &[Msg], tail: &Option<(String, bool)>) -> Vec<u8> {
    let mut s = String::new();
    if bom {
        s.push('\u{FEFF}');
    }
    let mut prev_end = "";
    for m in msgs {
        for l in &m.lines {
            let (name, v) = match &l.field {
                Field::Data(v) => ("data", v.clone()),
                Field::Event(v) => ("event", v.clone()),
                Field::Id(v) => ("id", v.clone()),
                Field::Retry(n) => ("retry", n.to_string()),
                Field::Comment(v) => ("", v.clone()),
                Field::Unknown(n, v) => (*n, v.clone()),
            };
            s.push_str(name);
            if !(l.bare && v.is_empty() && !name.is_empty()) {
                s.push(':');
                if l.space || v.starts_with(' ') {
                    s.push(' ');
                }
                s.push_str(&v);
            }
            prev_end = ENDS[l.end];
            s.push_str(prev_end);
        }
        // A blank line right after a `\r` must not be a lone `\n`: `\r\n` is one line end.
        let mut blank = ENDS[m.blank_end];
        if prev_end == "\r" && blank == "\n" {
            blank = "\r\n";
        }
        s.push_str(blank);
        prev_end = blank;
    }
    if let Some((t, complete)) = tail {
        s.push_str(t);
        if *complete {
            s.push('\n');
        }
    }
    s.into_bytes()
}

/// The messages a correct parser must produce, computed from the generated fields.
fn expected(msgs: &[Msg]) -> Vec<SseMessage> {
    let mut out = Vec::new();
    let mut last_id: Option<String> = None;
    for m in msgs {
        let mut data: Option<String> = None;
        let mut event = None;
        for l in &m.lines {
            match &l.field {
                Field::Data(v) => {
                    data = Some(match data {
                        None => v.clone(),
                        Some(d) => format!("{d}\n{v}"),
                    })
                }
                Field::Event(v) => event = (!v.is_empty()).then(|| v.clone()),
                Field::Id(v) if !v.contains('\0') => last_id = (!v.is_empty()).then(|| v.clone()),
                _ => {}
            }
        }
        if let Some(data) = data {
            out.push(SseMessage {
                event,
                data,
                id: last_id.clone(),
            });
        }
    }
    out
}

fn parse_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<SseMessage>, Option<Leftover>) {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.push(c, &mut out);
    }
    let left = p.finish();
    (out, left)
}

/// As the engine reads: each chunk's messages taken as they come, and each one's `data`
/// handed back to the parser once used (`SseParser::recycle`).
fn parse_chunks_recycling<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<SseMessage>, Option<Leftover>) {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for c in chunks {
        p.push(c, &mut out);
        for m in out.drain(..) {
            seen.push(m.clone());
            p.recycle(m.data);
        }
    }
    let left = p.finish();
    (seen, left)
}

fn split_at<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    // Repeated points give empty chunks, which must be harmless too.
    for p in points {
        chunks.push(&bytes[start..p]);
        start = p;
    }
    chunks.push(&bytes[start..]);
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_split_gives_the_generated_messages(
        bom in any::<bool>(),
        msgs in prop::collection::vec(msg(), 0..8),
        tail in tail(),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let bytes = render(bom, &msgs, &tail);
        let (whole, whole_left) = parse_chunks([bytes.as_slice()]);
        prop_assert_eq!(&whole, &expected(&msgs));
        match &tail {
            None => prop_assert_eq!(whole_left, None),
            Some((t, complete)) => prop_assert_eq!(whole_left, Some(Leftover {
                bytes: t.len() + usize::from(*complete),
                has_data: *complete,
                partial_line: !*complete,
            })),
        }

        let (split, split_left) = parse_chunks(split_at(&bytes, &cuts));
        prop_assert_eq!(&split, &whole);
        prop_assert_eq!(split_left, whole_left);

        let (bytewise, bytewise_left) = parse_chunks(bytes.chunks(1));
        prop_assert_eq!(&bytewise, &whole);
        prop_assert_eq!(bytewise_left, whole_left);

        let (recycled, recycled_left) = parse_chunks_recycling(split_at(&bytes, &cuts));
        prop_assert_eq!(&recycled, &whole);
        prop_assert_eq!(recycled_left, whole_left);
    }

    /// Arbitrary bytes drawn from an SSE-heavy alphabet (including invalid UTF-8 and BOM bytes):
    /// splitting never changes the messages or the leftover.
    #[test]
    fn arbitrary_bytes_split_equals_whole(
        bytes in prop::collection::vec(
            prop::sample::select(b"data:event:id: \r\n\r\n:x\xEF\xBB\xBF\xFF\xC3\xA9".to_vec()),
            0..200,
        ),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let whole = parse_chunks([bytes.as_slice()]);
        prop_assert_eq!(parse_chunks(split_at(&bytes, &cuts)), whole.clone());
        prop_assert_eq!(parse_chunks(bytes.chunks(1)), whole);
    }
}
