//! Property tests: evidence round-trips through the writer for arbitrary text and times.

use crate::common;

use inferbench_artifacts::console::format_thousands;
use inferbench_artifacts::{EvidenceWriter, format_2f, read_evidence};
use inferbench_core::evidence::EVIDENCE_FILE;
use inferbench_core::{Event, EvidenceHeader, Frame, Record};
use proptest::prelude::*;

fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "0.1.0".into(),
        anchor_unix_ns: 7,
        benchmark_id: "p".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "builtin".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn evidence_round_trips(
        texts in proptest::collection::vec(any::<String>(), 0..6),
        times in proptest::collection::vec(any::<u64>(), 3),
        id in any::<String>(),
    ) {
        let (_tmp, dir) = common::tmpdir("prop-ev");
        let record = Record {
            id: 1,
            request_id: id,
            start_ns: times[0],
            end_ns: times[1],
            frames: vec![Frame { t_ns: times[2], bytes: 1 }],
            events: texts
                .iter()
                .map(|t| Event { content: Some(t.clone()), raw: Some(t.clone()), ..Default::default() })
                .collect(),
            ..Default::default()
        };
        let mut w = EvidenceWriter::create(&dir, &header()).unwrap();
        w.write_record(&record).unwrap();
        w.flush().unwrap();
        let ev = read_evidence(&dir.join(EVIDENCE_FILE)).unwrap();
        prop_assert_eq!(ev.records, vec![record]);
    }

    #[test]
    fn thousands_is_two_decimals_with_commas(x in -1e12f64..1e12) {
        prop_assert_eq!(format_thousands(Some(x)).replace(',', ""), format_2f(Some(x)));
    }
}
