//! The built-in tokenizer on any text: it never panics, its pieces cover the text (decoding
//! its ids gives the text back, byte for byte), and `count` is the number of ids. Equality
//! with tiktoken-rs is the property tests' job (crates/inferbench-workload/src/o200k/tests.rs).
#![no_main]

use inferbench_workload::Tokenizer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    let tok = Tokenizer::builtin().expect("the built-in tokenizer");
    let ids = tok.encode(&text);
    assert_eq!(tok.count(&text), ids.len());
    assert_eq!(tok.decode(&ids), text);
});
