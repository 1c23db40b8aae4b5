//! The streaming evidence reader never panics on any bytes, and agrees with the whole-file
//! parser (which is built on it) on what it accepts.
#![no_main]

use inferbench_core::evidence::{EvidenceLine, EvidenceReader, parse_evidence};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let streamed: Option<usize> = EvidenceReader::new(input, "fuzz").ok().and_then(|r| {
        let mut n = 0;
        for line in r {
            if let EvidenceLine::Record(_) = line.ok()? {
                n += 1;
            }
        }
        Some(n)
    });
    if let Ok(text) = std::str::from_utf8(input) {
        let whole = parse_evidence("fuzz", text).ok();
        assert_eq!(whole.map(|e| e.records.len()), streamed);
    }
});
