//! The streaming evidence reader on any input: it never panics, and a valid file cut anywhere
//! (a crash mid-write) reads as a prefix of its records.

use inferbench_core::evidence::{EvidenceHeader, EvidenceLine, EvidenceReader, parse_evidence};
use inferbench_core::record::Record;
use proptest::prelude::*;

fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "0".into(),
        anchor_unix_ns: 5,
        benchmark_id: "b".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "builtin".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

fn file(records: u64) -> String {
    let mut s = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
    s.push('\n');
    for id in 0..records {
        let r = Record {
            id,
            ..Default::default()
        };
        s.push_str(&serde_json::to_string(&EvidenceLine::Record(Box::new(r))).unwrap());
        s.push('\n');
    }
    s
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(r) = EvidenceReader::new(&bytes[..], "x") {
            for _ in r {}
        }
    }

    #[test]
    fn a_file_cut_anywhere_reads_as_a_prefix(records in 0u64..6, cut in 0usize..2000) {
        let text = file(records);
        let cut = cut.min(text.len());
        let head_len = text.find('\n').unwrap() + 1;
        let part = &text[..cut];
        match parse_evidence("x", part) {
            Ok(ev) => {
                prop_assert!(cut >= head_len - 1);
                let ids: Vec<u64> = ev.records.iter().map(|r| r.id).collect();
                let want: Vec<u64> = (0..ids.len() as u64).collect();
                prop_assert_eq!(ids, want);
                prop_assert!(ev.records.len() as u64 <= records);
            }
            // Only a file cut inside its header has nothing to read.
            Err(_) => prop_assert!(cut < head_len),
        }
    }
}
