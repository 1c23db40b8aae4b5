//! The response decoders never panic, whatever the payload.
#![no_main]

use inferbench_protocol::decode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    // The transport hands the decoders lossily converted text, so do the same.
    let text = String::from_utf8_lossy(input);
    let _ = decode::is_done(&text);
    let _ = decode::decode_chat_chunk(&text);
    let _ = decode::decode_chat_body(&text);
    let _ = decode::decode_completions_chunk(&text);
    let _ = decode::decode_completions_body(&text);
});
