//! The SSE parser never panics, and splitting the input at any point gives the same messages
//! and the same leftover as feeding it whole.
#![no_main]

use inferbench_protocol::decode;
use inferbench_protocol::sse::{Leftover, SseMessage, SseParser};
use libfuzzer_sys::fuzz_target;

fn parse(chunks: &[&[u8]]) -> (Vec<SseMessage>, Option<Leftover>) {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.push(c, &mut out);
    }
    let left = p.finish();
    (out, left)
}

fuzz_target!(|input: &[u8]| {
    // The first two bytes choose the split point; the rest is the stream.
    if input.len() < 2 {
        return;
    }
    let (head, bytes) = input.split_at(2);
    let cut = usize::from(u16::from_le_bytes([head[0], head[1]])) % (bytes.len() + 1);
    let (a, b) = bytes.split_at(cut);

    let whole = parse(&[bytes]);
    assert_eq!(parse(&[a, b]), whole);
    // A three-way split around the same point catches state carried across two boundaries.
    let (b1, b2) = b.split_at(b.len().min(1));
    assert_eq!(parse(&[a, b1, b2]), whole);

    // Whatever the parser lets through goes to the decoders next; they must not panic either.
    for m in &whole.0 {
        let _ = decode::is_done(&m.data);
        let _ = decode::decode_chat_chunk(&m.data);
        let _ = decode::decode_completions_chunk(&m.data);
    }
});
