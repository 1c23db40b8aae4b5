//! The baseten_trace reader (Parquet, Arrow IPC file and stream) never panics, whatever the
//! file holds: every refusal names the file. Seed the corpus with the fixtures in
//! crates/inferbench-workload/tests/data/datasets/baseten*.
#![no_main]

use inferbench_workload::dataset::check_baseten_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Err(e) = check_baseten_bytes("fuzz.parquet", input) {
        assert!(e.to_string().starts_with("fuzz.parquet"));
    }
});
