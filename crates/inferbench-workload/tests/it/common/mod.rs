//! What the dataset tests share: the built-in tokenizer and a minimal run plan.
#![allow(dead_code)] // each test file uses a different subset

use std::sync::OnceLock;

use inferbench_core::plan::{
    ArtifactPlan, EndpointType, ExportLevel, LengthDist, LoadPlan, RunPlan, Target, TokenizerSpec,
    UiKind,
};
use inferbench_workload::Tokenizer;

pub fn builtin() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(|| Tokenizer::builtin().unwrap())
}

/// A plan for `endpoint`: synthetic ISL 16, no OSL, 4 entries, seed 7; tests change what
/// they need.
pub fn base_plan(endpoint: EndpointType) -> RunPlan {
    RunPlan {
        models: vec!["m".into()],
        target: Target::Url {
            url: "http://127.0.0.1:1".into(),
        },
        url: "http://127.0.0.1:1".into(),
        endpoint_type: endpoint,
        endpoint_path: endpoint.default_path().into(),
        streaming: false,
        api_key: None,
        headers: vec![],
        extra_inputs: Default::default(),
        request_timeout_seconds: 600.0,
        tokenizer: TokenizerSpec::Builtin,
        tokenizer_revision: None,
        use_server_token_count: false,
        use_legacy_max_tokens: false,
        isl: LengthDist {
            mean: 16.0,
            stddev: 0.0,
        },
        osl: None,
        num_dataset_entries: 4,
        random_seed: Some(7),
        load: LoadPlan {
            concurrency: 1,
            request_count: 10,
            ..Default::default()
        },
        artifacts: ArtifactPlan {
            dir: "a".into(),
            run_dir: "a/b".into(),
            prefix: "profile_export".into(),
            export_level: ExportLevel::Records,
            export_http_trace: false,
            evidence_compression: Default::default(),
            slice_duration_s: None,
        },
        ui: UiKind::None,
        cli_command: "inferbench profile".into(),
        goodput: None,
        confidence_level: 0.95,
        dataset: Default::default(),
        endpoint: Default::default(),
        telemetry: Default::default(),
        workers_max: None,
        tls: Default::default(),
        routing: Default::default(),
        connection: Default::default(),
        controls: Default::default(),
        shard: None,
    }
}

/// `data` as a one-member gzip file (deflated by miniz_oxide; CRC-32 computed here).
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                0xEDB8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
        }
    }
    let mut v = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    v.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    v.extend((!crc).to_le_bytes());
    v.extend((data.len() as u32).to_le_bytes());
    v
}

/// A file of `tests/data/datasets/`, as a path string.
pub fn data(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/datasets")
        .join(name)
        .display()
        .to_string()
}
