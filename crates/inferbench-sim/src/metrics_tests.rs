use super::*;

#[test]
fn numbers_are_written_as_prometheus_client_writes_them() {
    // Python: floatToGoString(x) for each.
    for (v, want) in [
        (0.0, "0.0"),
        (3.0, "3.0"),
        (0.001, "0.001"),
        (2560.0, "2560.0"),
        (0.123456789, "0.123456789"),
        (1.5e-5, "1.5e-05"),
        (123456.0, "123456.0"),
        (1234567.0, "1.234567e+06"),
        (1000000.0, "1e+06"),
        (1733000000.5, "1.7330000005e+09"),
        (1e16, "1e+16"),
        (-2.5, "-2.5"),
        (f64::INFINITY, "+Inf"),
        (f64::NEG_INFINITY, "-Inf"),
        (f64::NAN, "NaN"),
    ] {
        assert_eq!(go_float(v), want, "{v}");
    }
}

#[test]
fn histogram_buckets_are_cumulative_with_le_inclusive() {
    let h = Hist::new(&[0.001, 0.005, 0.01], NS);
    h.observe(1_000_000); // exactly 1 ms: the 0.001 bucket
    h.observe(1_000_001);
    h.observe(7_000_000);
    h.observe(2_000_000_000); // +Inf only
    let (cum, sum) = h.snapshot();
    assert_eq!(cum, vec![1, 2, 3, 4]);
    assert!((sum - 2.009000001).abs() < 1e-12);
}

/// The lines of one family (HELP, TYPE, samples) as `render` writes them.
fn lines_of<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| {
            let body = l
                .strip_prefix("# HELP ")
                .or_else(|| l.strip_prefix("# TYPE "))
                .unwrap_or(l);
            body.starts_with(prefix)
        })
        .collect()
}

#[test]
fn the_page_has_vllm_names_types_and_quirks() {
    let reg = Registry::new(1_733_000_000.25);
    reg.generation_tokens.fetch_add(5, Relaxed);
    reg.success[Finish::Length as usize].fetch_add(1, Relaxed);
    reg.ttft.observe(20_000_000); // 20 ms
    reg.ttft.observe(30_000_000); // 30 ms
    let g = Gauges {
        running: 2,
        waiting: 4,
        kv_usage: 0.25,
    };
    let text = render(&reg, &g, "m\"x");
    let l = "engine=\"0\",model_name=\"m\\\"x\"";
    assert!(text.contains(&format!("vllm:num_requests_running{{{l}}} 2.0\n")));
    assert!(text.contains(&format!("vllm:num_requests_waiting{{{l}}} 4.0\n")));
    assert!(text.contains(&format!("vllm:kv_cache_usage_perc{{{l}}} 0.25\n")));
    assert!(text.contains(&format!("vllm:gpu_prefix_cache_hit_rate{{{l}}} NaN\n")));
    // Counters: TYPE on the _total name, then a gauge family _created.
    assert_eq!(
        lines_of(&text, "vllm:generation_tokens"),
        vec![
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_total counter",
            &format!("vllm:generation_tokens_total{{{l}}} 5.0"),
            "# HELP vllm:generation_tokens_created Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_created gauge",
            &format!("vllm:generation_tokens_created{{{l}}} 1.73300000025e+09"),
        ]
    );
    assert!(text.contains(
        "vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\\\"x\"} 1.0\n"
    ));
    assert!(text.contains(
        "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m\\\"x\"} 0.0\n"
    ));
    assert!(text.contains(&format!("vllm:num_preemptions_total{{{l}}} 0.0\n")));
    // Histograms: buckets with le between the sorted labels, +Inf = _count, _sum, _created.
    let ttft = lines_of(&text, "vllm:time_to_first_token_seconds");
    assert_eq!(ttft[1], "# TYPE vllm:time_to_first_token_seconds histogram");
    assert!(ttft.contains(
        &"vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.01\",model_name=\"m\\\"x\"} 0.0"
    ));
    assert!(ttft.contains(
        &"vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.02\",model_name=\"m\\\"x\"} 1.0"
    ));
    assert!(ttft.contains(
        &"vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.04\",model_name=\"m\\\"x\"} 2.0"
    ));
    assert!(ttft.contains(
        &"vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\\\"x\"} 2.0"
    ));
    assert!(ttft.contains(&format!("vllm:time_to_first_token_seconds_count{{{l}}} 2.0").as_str()));
    assert!(ttft.contains(&format!("vllm:time_to_first_token_seconds_sum{{{l}}} 0.05").as_str()));
    assert!(ttft.contains(&"# TYPE vllm:time_to_first_token_seconds_created gauge"));
    // 22 bounds + Inf.
    assert_eq!(ttft.iter().filter(|s| s.contains("_bucket{")).count(), 23);
    // The histogram named _total, and its _created.
    assert!(text.contains("# TYPE vllm:iteration_tokens_total histogram\n"));
    assert!(text.contains("vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"1.0\","));
    assert!(text.contains("# TYPE vllm:iteration_tokens_total_created gauge\n"));
    // HELP escapes: a newline and a backslash, each written as two characters.
    assert!(text.contains(
        "# HELP vllm:gpu_prefix_cache_hit_rate GPU prefix cache block hit rate (hits \\\\ queries).\\nNaN:"
    ));
    assert!(text.ends_with('\n'));
    for h in [
        "vllm:inter_token_latency_seconds",
        "vllm:e2e_request_latency_seconds",
        "vllm:request_queue_time_seconds",
    ] {
        assert!(text.contains(&format!("# TYPE {h} histogram\n")), "{h}");
        assert!(text.contains(&format!("# TYPE {h}_created gauge\n")), "{h}");
    }
}

#[test]
fn a_restart_zeroes_every_series_and_moves_created() {
    let reg = Registry::new(100.0);
    reg.generation_tokens.fetch_add(7, Relaxed);
    reg.prompt_tokens.fetch_add(3, Relaxed);
    reg.finished(Finish::Stop);
    reg.e2e.observe(1);
    reg.restart(100.0); // same second: still a new start
    assert_eq!(reg.generation_tokens.load(Relaxed), 0);
    assert_eq!(reg.prompt_tokens.load(Relaxed), 0);
    assert_eq!(reg.success[0].load(Relaxed), 0);
    assert_eq!(reg.e2e.snapshot().0.last(), Some(&0));
    assert!(reg.created() > 100.0);
    reg.restart(200.0);
    assert_eq!(reg.created(), 200.0);
    assert_eq!(reg.restarts.load(Relaxed), 2);
}
