//! `input_config` in AIPerf's shape, where AIPerf's own tools read it.

use inferbench_artifacts::input_config::aiperf_input_config;

use crate::common::plan;

#[test]
fn the_model_the_load_and_the_slices_are_where_aiperf_reads_them() {
    let mut plan = plan();
    plan.models = vec!["m1".into(), "m2".into()];
    plan.load.concurrency = 8;
    plan.load.request_count = 100;
    plan.load.request_rate = None;
    plan.load.user_centric = None;
    plan.load.warmup_request_count = 0;
    plan.load.warmup_duration_s = None;
    plan.artifacts.slice_duration_s = Some(0.5);
    let c = aiperf_input_config(&plan);
    // aiperf plot reads `models.items[0].name`, the profiling phase's `concurrency` and
    // `artifacts.slice_duration`.
    assert_eq!(c["models"]["items"][0]["name"], "m1");
    assert_eq!(c["models"]["items"][1]["name"], "m2");
    let phases = c["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0]["name"], "profiling");
    assert_eq!(phases[0]["type"], "concurrency");
    assert_eq!(phases[0]["concurrency"], 8);
    assert_eq!(phases[0]["requests"], 100);
    assert_eq!(c["artifacts"]["slice_duration"], 0.5);
    assert_eq!(c["endpoint"]["type"], plan.endpoint_type.as_str());
    assert_eq!(c["endpoint"]["streaming"], plan.streaming);

    // A rate with a warmup: the warmup phase first, each with its pattern and rate.
    plan.load.request_rate = Some(inferbench_core::plan::RatePlan {
        rate: 20.0,
        pattern: inferbench_core::plan::ArrivalKind::Constant,
        smoothness: None,
        ramp_s: None,
        ceiling: None,
        series: None,
    });
    plan.load.warmup_request_count = 5;
    let c = aiperf_input_config(&plan);
    let phases = c["phases"].as_array().unwrap();
    assert_eq!(phases[0]["name"], "warmup");
    assert_eq!(phases[0]["requests"], 5);
    assert_eq!(phases[0]["type"], "constant");
    assert_eq!(phases[1]["type"], "constant");
    assert_eq!(phases[1]["rate"], 20.0);
}

#[test]
fn the_dataset_entry_has_aiperfs_discriminated_shape() {
    // AIPerf's v2 `datasets[]`: `{type: "file", path, format}`, `{type: "public", dataset}`
    // or `{type: "synthetic"}` (the config schema's FileDataset / PublicDataset /
    // SyntheticDataset); `speed-bench-report` reads the category from `format`.
    let mut plan = plan();
    plan.dataset.input_file = None;
    plan.dataset.custom_dataset_type = None;
    plan.dataset.public_dataset = None;
    let c = aiperf_input_config(&plan);
    assert_eq!(c["datasets"][0]["type"], "synthetic");
    assert!(c["datasets"][0].get("format").is_none());

    plan.dataset.input_file = Some("speed.jsonl".into());
    plan.dataset.custom_dataset_type = Some("speed_bench_coding".into());
    let c = aiperf_input_config(&plan);
    assert_eq!(c["datasets"][0]["type"], "file");
    assert_eq!(c["datasets"][0]["format"], "speed_bench_coding");
    assert_eq!(c["datasets"][0]["path"], "speed.jsonl");

    plan.dataset.custom_dataset_type = None;
    let c = aiperf_input_config(&plan);
    assert_eq!(c["datasets"][0]["type"], "file");
    assert!(c["datasets"][0].get("format").is_none());

    plan.dataset.public_dataset = Some("sharegpt".into());
    let c = aiperf_input_config(&plan);
    assert_eq!(c["datasets"][0]["type"], "public");
    assert_eq!(c["datasets"][0]["dataset"], "sharegpt");
}

#[test]
fn ramps_are_written_per_phase_where_analyze_swim_lane_reads_them() {
    // `analyze swim-lane` draws its "ramp done" line at the first results phase's
    // `concurrency_ramp.duration`; AIPerf writes a ramp as `{duration}` under the phase.
    let mut plan = plan();
    plan.load.request_rate = None;
    plan.load.user_centric = None;
    plan.load.warmup_request_count = 0;
    plan.load.warmup_duration_s = None;
    plan.load.concurrency_ramp_s = None;
    plan.load.prefill_concurrency_ramp_s = None;
    let c = aiperf_input_config(&plan);
    assert!(c["phases"][0].get("concurrency_ramp").is_none());
    assert!(c["phases"][0].get("rate_ramp").is_none());

    plan.load.concurrency_ramp_s = Some(3.0);
    plan.load.prefill_concurrency_ramp_s = Some(2.0);
    plan.load.warmup_request_count = 10;
    plan.load.warmup_concurrency_ramp_s = Some(1.5);
    let c = aiperf_input_config(&plan);
    let phases = c["phases"].as_array().unwrap();
    assert_eq!(phases[0]["kind"], "warmup");
    assert_eq!(phases[0]["exclude_from_results"], true);
    assert!(phases[1].get("exclude_from_results").is_none());
    assert_eq!(phases[0]["concurrency_ramp"]["duration"], 1.5);
    // The warmup's prefill ramp falls back to the profiling one, as the flag does.
    assert_eq!(phases[0]["prefill_ramp"]["duration"], 2.0);
    assert_eq!(phases[1]["concurrency_ramp"]["duration"], 3.0);
    assert_eq!(phases[1]["prefill_ramp"]["duration"], 2.0);
    assert!(phases[1].get("rate_ramp").is_none());

    plan.load.request_rate = Some(inferbench_core::plan::RatePlan {
        rate: 20.0,
        pattern: inferbench_core::plan::ArrivalKind::Poisson,
        smoothness: None,
        ramp_s: Some(4.0),
        ceiling: None,
        series: None,
    });
    let c = aiperf_input_config(&plan);
    assert_eq!(c["phases"][0]["rate_ramp"]["duration"], 4.0);
    assert_eq!(c["phases"][1]["rate_ramp"]["duration"], 4.0);
}
