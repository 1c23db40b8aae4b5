//! The trace parsers (mooncake, bailian, BurstGPT CSV, SageMaker capture, and the agentic
//! weka_trace, tracelab and dag_jsonl) never panic,
//! whatever the file holds: each input is checked as every trace type.
#![no_main]

use inferbench_workload::dataset::{DatasetKind, check_trace_text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    for kind in [
        DatasetKind::MooncakeTrace,
        DatasetKind::BailianTrace,
        DatasetKind::BurstGptTrace,
        DatasetKind::SagemakerDataCapture,
        DatasetKind::WekaTrace,
        DatasetKind::Tracelab,
        DatasetKind::DagJsonl,
    ] {
        if let Err(e) = check_trace_text(kind, "fuzz.jsonl", text) {
            // Every refusal names the file.
            assert!(e.to_string().starts_with("fuzz.jsonl"));
        }
    }
});
