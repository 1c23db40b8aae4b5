//! The ledger line parser never panics on any bytes; a line it accepts re-serializes to
//! canonical JSON that it accepts again as the same entry.
#![no_main]

use inferbench_ledger::entry::parse_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Ok(e) = parse_line(input, 1) {
        let line = e.to_line().expect("an accepted entry is JSON");
        let again = parse_line(line.as_bytes(), 1).expect("its canonical line parses");
        assert_eq!(again.to_line().unwrap(), line);
    }
});
