//! The gate spec parser never panics on any text, and a refusal is one line that names the
//! file (the property the unit tests check on generated text, here on libFuzzer's inputs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    if let Err(e) = inferbench_run::gate::parse_str("g.toml", text) {
        assert!(e.message.starts_with("g.toml"), "{}", e.message);
        assert!(!e.message.contains('\n'), "{}", e.message);
    }
});
