//! The response decoders never panic, whatever the payload; and a stream's decoder, which
//! remembers its chunks' leading fields, answers for each line of the input (a stream's
//! messages) exactly as decoding that line alone does.
#![no_main]

use inferbench_core::endpoint_plan::EndpointPlan;
use inferbench_core::plan::EndpointType;
use inferbench_protocol::decode::{self, Decoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    // The transport hands the decoders lossily converted text, so do the same.
    let text = String::from_utf8_lossy(input);
    let _ = decode::is_done(&text);
    let _ = decode::decode_chat_chunk(&text);
    let _ = decode::decode_chat_body(&text);
    let _ = decode::decode_completions_chunk(&text);
    let _ = decode::decode_completions_body(&text);
    for (endpoint, alone) in [
        (
            EndpointType::Chat,
            decode::decode_chat_chunk as fn(&str) -> Result<decode::Decoded, decode::DecodeError>,
        ),
        (EndpointType::Completions, decode::decode_completions_chunk),
    ] {
        let decoder = Decoder::new(endpoint, &EndpointPlan::default()).expect("a stream decoder");
        let mut stream = decoder.stream();
        for line in text.lines() {
            assert_eq!(stream.message(None, line), alone(line), "{line}");
        }
    }
});
