//! Prompt synthesis (550 tokens) and response counting (16 words), with both tokenizers.

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
