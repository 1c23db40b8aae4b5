//! The engine's HTTP/1.1 response reader never panics: a response head, then its body's
//! framing, over arbitrary bytes; and splitting the bytes at any point gives the same body
//! data and the same end as feeding them whole.
#![no_main]

use bytes::BytesMut;
use inferbench_client::h1::body::{BodyDecoder, Step};
use inferbench_client::h1::head::parse_response;
use libfuzzer_sys::fuzz_target;

/// The data and how it ended: Ok(true) ended, Ok(false) needs more, Err a broken framing.
fn read(pieces: &[&[u8]]) -> (Vec<u8>, Result<bool, String>) {
    let mut buf = BytesMut::new();
    let mut pieces = pieces.iter();
    let head = loop {
        match parse_response(&mut buf) {
            Ok(Some(h)) => break h,
            Ok(None) => match pieces.next() {
                Some(p) => buf.extend_from_slice(p),
                None => return (Vec::new(), Ok(false)),
            },
            Err(e) => return (Vec::new(), Err(e.0)),
        }
    };
    let mut body = BodyDecoder::new(head.framing);
    let mut data = Vec::new();
    loop {
        match body.step(&mut buf) {
            Ok(Step::Data(n)) => data.extend_from_slice(&buf.split_to(n)),
            Ok(Step::End) => return (data, Ok(true)),
            Ok(Step::NeedMore) => match pieces.next() {
                Some(p) => buf.extend_from_slice(p),
                None => return (data, Ok(false)),
            },
            Err(e) => return (data, Err(e.0)),
        }
    }
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let (head, bytes) = input.split_at(2);
    let cut = usize::from(u16::from_le_bytes([head[0], head[1]])) % (bytes.len() + 1);
    let (a, b) = bytes.split_at(cut);
    let whole = read(&[bytes]);
    let split = read(&[a, b]);
    // A clean end or an error reads the same however the bytes came.
    if !matches!(whole.1, Ok(false)) {
        assert_eq!(split, whole);
    }
});
