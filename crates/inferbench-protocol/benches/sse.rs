//! Per-stream cost of the hot path: SSE parsing plus chunk decoding of a realistic 16-token
//! chat stream (role-only first event, 16 content events, usage chunk, `[DONE]`), delivered as
//! one transport frame per event, as a server that flushes every token does.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use inferbench_core::endpoint_plan::EndpointPlan;
use inferbench_core::plan::EndpointType;
use inferbench_protocol::decode::{Decoded, Decoder, decode_chat_chunk, is_done};
use inferbench_protocol::sse::{SseMessage, SseParser};

const WORDS: [&str; 8] = [" the", " and", " to", " of", " you", " my", " a", " that"];

/// The frames of one response, shaped like the mock's (and vLLM's) output.
fn frames() -> Vec<Vec<u8>> {
    let head = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":["#;
    let mut frames = vec![format!(
        "data: {head}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"
    )];
    for i in 0..16 {
        let finish = if i == 15 { "\"length\"" } else { "null" };
        frames.push(format!(
            "data: {head}{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\"finish_reason\":{finish}}}]}}\n\n",
            WORDS[i % WORDS.len()]
        ));
    }
    frames.push(format!(
        "data: {head}],\"usage\":{{\"prompt_tokens\":23,\"completion_tokens\":16,\"total_tokens\":39}}}}\n\n"
    ));
    frames.push("data: [DONE]\n\n".to_owned());
    frames.into_iter().map(String::into_bytes).collect()
}

fn run_stream(parser: &mut SseParser, msgs: &mut Vec<SseMessage>, frames: &[Vec<u8>]) -> usize {
    let mut texts = 0;
    for f in frames {
        parser.push(f, msgs);
        for m in msgs.drain(..) {
            if is_done(&m.data) {
                continue;
            }
            let d = decode_chat_chunk(&m.data).expect("valid chunk");
            texts += usize::from(d.content.is_some_and(|c| !c.is_empty()));
            black_box(d.usage);
        }
    }
    assert!(parser.finish().is_none());
    texts
}

fn bench(c: &mut Criterion) {
    let frames = frames();
    let mut g = c.benchmark_group("chat_stream_16_tokens");
    // One element = one whole response, so criterion reports streams per second.
    g.throughput(Throughput::Elements(1));

    let mut parser = SseParser::new();
    let mut msgs = Vec::new();
    assert_eq!(run_stream(&mut parser, &mut msgs, &frames), 16);
    g.bench_function("parse_and_decode", |b| {
        b.iter(|| run_stream(&mut parser, &mut msgs, black_box(&frames)))
    });

    g.bench_function("parse_only", |b| {
        b.iter(|| {
            for f in black_box(&frames) {
                parser.push(f, &mut msgs);
            }
            black_box(parser.finish());
            msgs.drain(..).count()
        })
    });

    let datas: Vec<String> = {
        for f in &frames {
            parser.push(f, &mut msgs);
        }
        parser.finish();
        msgs.drain(..)
            .map(|m| m.data)
            .filter(|d| !is_done(d))
            .collect()
    };
    g.bench_function("decode_only", |b| {
        b.iter(|| {
            for d in black_box(&datas) {
                black_box(decode_chat_chunk(d).expect("valid chunk"));
            }
        })
    });
    // The engine's path: one decoder per stream, each message decoded into a `Decoded` the
    // caller holds (no result moved out).
    let decoder = Decoder::new(EndpointType::Chat, &EndpointPlan::default()).expect("chat");
    g.bench_function("message_into", |b| {
        let mut out = Decoded::default();
        b.iter(|| {
            let mut stream = decoder.stream();
            for d in black_box(&datas) {
                stream.message_into(None, d, &mut out).expect("valid chunk");
                black_box(&out);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
