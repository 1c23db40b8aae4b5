//! The media readers never panic: multipart forms (the simulated server's upload reader),
//! the media counts of a body, and the transcription and image-generation decoders.
#![no_main]

use inferbench_core::plan::EndpointType;
use inferbench_protocol::{decode, media, multipart};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let _ = multipart::parse_form(input, multipart::BOUNDARY);
    let text = String::from_utf8_lossy(input);
    if let Ok(serde_json::Value::Object(body)) = serde_json::from_str(&text) {
        for e in EndpointType::ALL {
            let _ = media::media_sent(e, &body);
        }
    }
    for e in [
        EndpointType::AudioTranscription,
        EndpointType::ImageGeneration,
    ] {
        let _ = decode::decode_response_body(e, &text);
        let _ = decode::decode_stream_message(e, None, &text);
    }
});
