//! The AIPerf importer never panics on arbitrary or truncated lines: it returns records or
//! an error.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use inferbench_import::aiperf::import;
use proptest::prelude::*;

static CASE: AtomicUsize = AtomicUsize::new(0);

fn fresh_dir() -> PathBuf {
    let n = CASE.fetch_add(1, Ordering::Relaxed);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aiperf-prop-{n}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn words(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

fn fixture_lines(file: &str) -> Vec<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/aiperf/s6")
        .join(file);
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .take(12)
        .map(str::to_string)
        .collect()
}

/// JSON-ish fragments that reach deeper into the parsers than random bytes do.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{\"metadata\":{\"request_start_ns\":1,\"request_end_ns\":0}}".to_string()),
        Just("{\"metadata\":{\"request_start_ns\":5,\"request_end_ns\":9},\"start_perf_ns\":9,\"responses\":[{\"perf_ns\":1,\"text\":\"x\"}]}".to_string()),
        Just("{\"metadata\":{\"request_start_ns\":5,\"request_end_ns\":9},\"metrics\":{\"request_latency\":{\"value\":1e300},\"time_to_first_token\":{\"value\":-1}}}".to_string()),
        Just("{\"metadata\":{\"request_start_ns\":5,\"request_end_ns\":9},\"metrics\":{\"inter_chunk_latency\":{\"value\":[1e30,1e30]},\"time_to_first_token\":{\"value\":1e12}}}".to_string()),
        "\\PC{0,80}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn truncated_fixture_lines_never_panic(
        raw_cut in 0usize..4000,
        rec_cut in 0usize..4000,
        which in 0usize..12,
        newline in any::<bool>(),
    ) {
        let raw = fixture_lines("profile_export_raw.jsonl");
        let recs = fixture_lines("profile_export.jsonl");
        let d = fresh_dir();
        let cut = |l: &str, at: usize| {
            let mut at = at.min(l.len());
            while !l.is_char_boundary(at) {
                at -= 1;
            }
            l[..at].to_string()
        };
        let mut raw_text: Vec<String> = raw.clone();
        raw_text[which] = cut(&raw[which], raw_cut);
        let mut rec_text: Vec<String> = recs.clone();
        rec_text[which] = cut(&recs[which], rec_cut);
        let end = if newline { "\n" } else { "" };
        std::fs::write(d.join("profile_export_raw.jsonl"), raw_text.join("\n") + end).unwrap();
        std::fs::write(d.join("profile_export.jsonl"), rec_text.join("\n") + end).unwrap();
        let _ = import(&d, &words);
    }

    #[test]
    fn arbitrary_lines_never_panic(
        lines in proptest::collection::vec(fragment(), 1..5),
        as_raw in any::<bool>(),
    ) {
        let d = fresh_dir();
        let name = if as_raw { "profile_export_raw.jsonl" } else { "profile_export.jsonl" };
        std::fs::write(d.join(name), lines.join("\n")).unwrap();
        let _ = import(&d, &words);
    }
}
