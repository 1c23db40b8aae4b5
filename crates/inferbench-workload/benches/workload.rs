//! Prompt synthesis (550 tokens) and response counting (16 words), with both tokenizers, and
//! the built-in tokenizer's count against tiktoken-rs's, the implementation it replaced.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use inferbench_workload::{Corpus, PromptGenerator, Tokenizer};

fn tokenizers() -> Vec<(&'static str, Tokenizer)> {
    let fixture = format!("{}/tests/data/tokenizer", env!("CARGO_MANIFEST_DIR"));
    vec![
        ("builtin", Tokenizer::builtin().expect("builtin tokenizer")),
        (
            "fixture",
            Tokenizer::from_path(&fixture).expect("fixture tokenizer"),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let corpus = Corpus::shakespeare();
    let response = " the and to of you my a that the and to of you my a that";
    for (name, tok) in tokenizers() {
        // Tokenize the corpus outside the measured loop.
        let mut g = PromptGenerator::new(&tok, corpus, 1).expect("generator");
        c.bench_function(&format!("prompt_550/{name}"), |b| {
            b.iter(|| g.prompt(black_box(550)).expect("prompt"))
        });
        c.bench_function(&format!("count_16_words/{name}"), |b| {
            b.iter(|| tok.count(black_box(response)))
        });
    }
    // The same counts through tiktoken-rs (a dev-dependency, the tests' oracle): the before
    // of the built-in tokenizer's own implementation.
    let tiktoken = tiktoken_rs::o200k_base().expect("tiktoken-rs o200k_base");
    c.bench_function("count_16_words/tiktoken-rs", |b| {
        b.iter(|| tiktoken.encode_ordinary(black_box(response)).len())
    });
    let builtin = Tokenizer::builtin().expect("builtin tokenizer");
    let text = corpus.text();
    let mut end = 4000.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let page = &text[..end];
    c.bench_function("count_4000_bytes/builtin", |b| {
        b.iter(|| builtin.count(black_box(page)))
    });
    c.bench_function("count_4000_bytes/tiktoken-rs", |b| {
        b.iter(|| tiktoken.encode_ordinary(black_box(page)).len())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
