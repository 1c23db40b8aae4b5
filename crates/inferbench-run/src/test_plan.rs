//! A minimal run plan for the unit tests (what `inferbench profile` with no flags resolves
//! to, less the simulated target's URL).

use inferbench_core::plan::{
    ArtifactPlan, EndpointType, ExportLevel, LengthDist, LoadPlan, RunPlan, Target, TokenizerSpec,
    UiKind,
};

pub fn plan() -> RunPlan {
    let endpoint = EndpointType::Chat;
    RunPlan {
        models: vec!["mock-model".into()],
        target: Target::Simulated {
            ttft_ms: 0.0,
            itl_ms: 0.0,
            error_rate: 0.0,
            answer_accuracy: None,
            serving: Default::default(),
        },
        url: "http://127.0.0.1:1".into(),
        endpoint_type: endpoint,
        endpoint_path: endpoint.default_path().into(),
        streaming: true,
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
        osl: Some(LengthDist {
            mean: 8.0,
            stddev: 0.0,
        }),
        num_dataset_entries: 4,
        random_seed: Some(7),
        load: LoadPlan {
            concurrency: 2,
            request_count: 10,
            ..Default::default()
        },
        artifacts: ArtifactPlan {
            dir: "artifacts".into(),
            run_dir: "artifacts/run".into(),
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
