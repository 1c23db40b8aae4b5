use proptest::prelude::*;

use super::*;

fn ok(text: &str) -> Exposition {
    match parse(text, None) {
        Ok(e) => e,
        Err(e) => panic!("{e}\n--- body ---\n{text}"),
    }
}

fn err(text: &str) -> ParseError {
    parse(text, None).expect_err("must fail")
}

fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn value(e: &Exposition, family: &str, sample: &str, l: &[(&str, &str)]) -> f64 {
    let f = e
        .family(family)
        .unwrap_or_else(|| panic!("no family {family}"));
    let want = labels(l);
    f.samples
        .iter()
        .find(|s| s.name == sample && s.labels == want)
        .unwrap_or_else(|| panic!("no sample {sample}{l:?} in {family}"))
        .value
}

/// A vLLM body as prometheus_client 0.26 renders it in 0.0.4 mode (§2.1): counters
/// `_total` with separate `_created` gauge families, `le` before the other labels, a
/// histogram whose name ends `_total`.
const VLLM: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.0123
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1027.0
# HELP vllm:generation_tokens_created Number of generation tokens processed.
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7560473e+09
# HELP vllm:iteration_tokens_total Histogram of number of tokens per engine_step.
# TYPE vllm:iteration_tokens_total histogram
vllm:iteration_tokens_total_bucket{le="1.0",engine="0",model_name="Qwen/Qwen3-0.6B"} 10.0
vllm:iteration_tokens_total_bucket{le="8.0",engine="0",model_name="Qwen/Qwen3-0.6B"} 25.0
vllm:iteration_tokens_total_bucket{le="+Inf",engine="0",model_name="Qwen/Qwen3-0.6B"} 30.0
vllm:iteration_tokens_total_count{engine="0",model_name="Qwen/Qwen3-0.6B"} 30.0
vllm:iteration_tokens_total_sum{engine="0",model_name="Qwen/Qwen3-0.6B"} 180.0
# HELP vllm:iteration_tokens_total_created Histogram of number of tokens per engine_step.
# TYPE vllm:iteration_tokens_total_created gauge
vllm:iteration_tokens_total_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7560473e+09
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="Qwen/Qwen3-0.6B"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.005",model_name="Qwen/Qwen3-0.6B"} 4.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-0.6B"} 5.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="Qwen/Qwen3-0.6B"} 5.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.0213
"#;

#[test]
fn vllm_text_004_body() {
    let e = ok(VLLM);
    assert_eq!(e.format, Format::Text004);
    let names: Vec<&str> = e.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "vllm:num_requests_running",
            "vllm:kv_cache_usage_perc",
            "vllm:generation_tokens_total",
            "vllm:generation_tokens_created",
            "vllm:iteration_tokens_total",
            "vllm:iteration_tokens_total_created",
            "vllm:time_to_first_token_seconds",
        ]
    );
    let gen_tokens = e.family("vllm:generation_tokens_total").unwrap();
    assert_eq!(gen_tokens.kind, MetricType::Counter);
    assert_eq!(
        gen_tokens.help.as_deref(),
        Some("Number of generation tokens processed.")
    );
    let m = [("engine", "0"), ("model_name", "Qwen/Qwen3-0.6B")];
    assert_eq!(
        value(
            &e,
            "vllm:generation_tokens_total",
            "vllm:generation_tokens_total",
            &m
        ),
        1027.0
    );
    // `_created` stays its own gauge family.
    let created = e.family("vllm:generation_tokens_created").unwrap();
    assert_eq!(created.kind, MetricType::Gauge);
    assert_eq!(created.samples[0].value, 1.7560473e9);
    // A histogram despite `_total`: its samples resolve to it, `le` sorted into place.
    let it = e.family("vllm:iteration_tokens_total").unwrap();
    assert_eq!(it.kind, MetricType::Histogram);
    assert_eq!(it.samples.len(), 5);
    assert_eq!(
        it.samples[1].labels,
        labels(&[
            ("engine", "0"),
            ("le", "8.0"),
            ("model_name", "Qwen/Qwen3-0.6B")
        ])
    );
    assert_eq!(it.samples[3].name, "vllm:iteration_tokens_total_count");
    assert_eq!(it.samples[4].value, 180.0);
    let ttft = e.family("vllm:time_to_first_token_seconds").unwrap();
    assert_eq!(ttft.samples.len(), 5);
    assert!(ttft.samples.iter().all(|s| s.timestamp_ms.is_none()));
}

#[test]
fn tgi_counters_without_total_trust_the_type_line() {
    let body = "# TYPE tgi_request_count counter\ntgi_request_count 17\n\
        # TYPE tgi_request_generated_tokens histogram\n\
        tgi_request_generated_tokens_bucket{le=\"10\"} 2\n\
        tgi_request_generated_tokens_bucket{le=\"+Inf\"} 3\n\
        tgi_request_generated_tokens_sum 412\n\
        tgi_request_generated_tokens_count 3\n\
        # TYPE tgi_queue_size gauge\ntgi_queue_size 0\n";
    let e = ok(body);
    assert_eq!(e.families.len(), 3);
    assert_eq!(
        e.family("tgi_request_count").unwrap().kind,
        MetricType::Counter
    );
    let h = e.family("tgi_request_generated_tokens").unwrap();
    assert_eq!(h.kind, MetricType::Histogram);
    assert_eq!(
        value(
            &e,
            "tgi_request_generated_tokens",
            "tgi_request_generated_tokens_sum",
            &[]
        ),
        412.0
    );
}

#[test]
fn dcgm_body_with_a_blank_sentinel() {
    let body = "# HELP DCGM_FI_DEV_MEMORY_TEMP Memory temperature (in C).\n\
        # TYPE DCGM_FI_DEV_MEMORY_TEMP gauge\n\
        DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\",UUID=\"GPU-604ac76c\",device=\"nvidia0\",modelName=\"Tesla T4\",Hostname=\"h\"} 9223372036854775794\n\
        # HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n\
        # TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n\
        DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-604ac76c\",device=\"nvidia0\",modelName=\"Tesla T4\",Hostname=\"h\"} 1.7560473e+07\n";
    let e = ok(body);
    let t = e.family("DCGM_FI_DEV_MEMORY_TEMP").unwrap();
    assert_eq!(t.samples[0].value, 9223372036854775794.0);
    // Labels sorted by byte order: upper case first.
    let keys: Vec<&str> = t.samples[0].labels.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(keys, ["Hostname", "UUID", "device", "gpu", "modelName"]);
    let energy = e.family("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").unwrap();
    assert_eq!(energy.kind, MetricType::Counter);
    assert_eq!(energy.samples[0].value, 17_560_473.0);
}

#[test]
fn openmetrics_body_with_exemplars_unit_and_eof() {
    let body = "# TYPE vllm:generation_tokens counter\n\
        # UNIT vllm:generation_tokens tokens\n\
        # HELP vllm:generation_tokens Number of \"generation\" tokens.\n\
        vllm_generation_tokens_total{engine=\"0\"} 1027.0 # {trace_id=\"abc\"} 1.0 1700000000.5\n\
        vllm_generation_tokens_created{engine=\"0\"} 1.7e9\n\
        # TYPE req_seconds histogram\n\
        req_seconds_bucket{le=\"0.5\"} 1 # {trace_id=\"x y\"} 0.3\n\
        req_seconds_bucket{le=\"+Inf\"} 2\n\
        req_seconds_count 2 1700000000.123\n\
        req_seconds_sum 1.25\n\
        req_seconds_created 1.6e9\n\
        # EOF\n";
    for ct in [
        None,
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    ] {
        let e = parse(body, ct).unwrap();
        assert_eq!(e.format, Format::OpenMetrics);
        assert_eq!(e.families.len(), 2);
        let g = e.family("vllm:generation_tokens").unwrap();
        assert_eq!(g.kind, MetricType::Counter);
        assert_eq!(g.unit.as_deref(), Some("tokens"));
        // OpenMetrics HELP also unescapes `\"`.
        assert_eq!(g.help.as_deref(), Some("Number of \"generation\" tokens."));
        assert_eq!(g.samples.len(), 2);
        assert_eq!(g.samples[0].name, "vllm_generation_tokens_total");
        assert_eq!(g.samples[0].value, 1027.0);
        // The exemplar's timestamp is not the sample's.
        assert_eq!(g.samples[0].timestamp_ms, None);
        assert_eq!(g.samples[1].name, "vllm_generation_tokens_created");
        let h = e.family("req_seconds").unwrap();
        assert_eq!(h.samples.len(), 5);
        // Float seconds → ms.
        assert_eq!(h.samples[2].timestamp_ms, Some(1_700_000_000_123));
    }
    // Declared OpenMetrics without `# EOF`: truncated.
    let cut = body.replace("# EOF\n", "");
    let e = parse(&cut, Some("application/openmetrics-text; version=1.0.0")).unwrap_err();
    assert_eq!(e.line, 11);
    assert!(e.message.contains("# EOF"), "{e}");
    // Nothing may follow `# EOF` (then the body no longer ends with it: only the header says
    // OpenMetrics; without it, 0.0.4 rejects the exemplar on line 4).
    let after = format!("{body}x 1\n");
    let e = parse(&after, Some("application/openmetrics-text")).unwrap_err();
    assert_eq!(e.line, 13);
    assert!(e.message.contains("after `# EOF`"), "{e}");
    assert_eq!(err(&after).line, 4);
    // Blank lines after it are fine.
    assert!(parse(&format!("{body}\n\n"), None).is_ok());
}

#[test]
fn openmetrics_escaped_histogram_samples_find_their_colon_family() {
    // prometheus_client's OpenMetrics output: TYPE keeps `vllm:`, samples escape it.
    let body = "# TYPE vllm:iteration_tokens_total histogram\n\
        vllm_iteration_tokens_total_bucket{le=\"1.0\"} 2.0\n\
        vllm_iteration_tokens_total_bucket{le=\"+Inf\"} 3.0\n\
        vllm_iteration_tokens_total_count 3.0\n\
        vllm_iteration_tokens_total_sum 7.0\n\
        vllm_iteration_tokens_total_created 1.7e9\n\
        # TYPE vllm:num_requests_running gauge\n\
        vllm_num_requests_running 4.0\n\
        # EOF\n";
    let e = ok(body);
    assert_eq!(e.families.len(), 2);
    let h = e.family("vllm:iteration_tokens_total").unwrap();
    assert_eq!(h.kind, MetricType::Histogram);
    assert_eq!(h.samples.len(), 5);
    assert_eq!(
        e.family("vllm:num_requests_running").unwrap().samples[0].value,
        4.0
    );
    // In 0.0.4 the same escaped names are their own untyped families: the two declared
    // (empty) families plus `_bucket`, `_count`, `_sum`, `_created` and the gauge sample.
    let text = body.replace("# EOF\n", "");
    assert_eq!(ok(&text).families.len(), 2 + 5);
}

#[test]
fn openmetrics_gaugehistogram_info_and_counter_created() {
    let body = "# TYPE q gaugehistogram\nq_bucket{le=\"+Inf\"} 3\nq_gcount 3\nq_gsum 7\n\
        # TYPE build info\nbuild_info{version=\"1\"} 1\n\
        # TYPE c counter\nc_total 4\nc_created 1.5\n# EOF";
    let e = ok(body);
    let kinds: Vec<(String, MetricType, usize)> = e
        .families
        .iter()
        .map(|f| (f.name.clone(), f.kind, f.samples.len()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("q".to_string(), MetricType::GaugeHistogram, 3),
            ("build".to_string(), MetricType::Info, 1),
            ("c".to_string(), MetricType::Counter, 2),
        ]
    );
}

#[test]
fn summary_owns_its_quantiles_sum_and_count() {
    let body =
        "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns{quantile=\"0.99\"} NaN\ns_sum 3\ns_count 2\n";
    let e = ok(body);
    let s = e.family("s").unwrap();
    assert_eq!(s.kind, MetricType::Summary);
    assert_eq!(s.samples.len(), 4);
    assert!(s.samples[1].value.is_nan());
}

#[test]
fn no_type_means_own_untyped_family_never_inferred_from_suffix() {
    let e = ok("x_bucket{le=\"1\"} 1\nx_sum 2\nx_count 1\nfoo_total 3\n");
    let kinds: Vec<(&str, MetricType)> = e
        .families
        .iter()
        .map(|f| (f.name.as_str(), f.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("x_bucket", MetricType::Untyped),
            ("x_sum", MetricType::Untyped),
            ("x_count", MetricType::Untyped),
            ("foo_total", MetricType::Untyped),
        ]
    );
    // A gauge does not own `_sum`.
    let e = ok("# TYPE g gauge\ng 1\ng_sum 2\n");
    assert_eq!(e.families.len(), 2);
}

#[test]
fn whitespace_comments_blank_lines_and_no_final_newline() {
    let body = "  # a comment\n\n#TYPE a gauge\n\t a \t{ b = \"1\" , } \t 2.5\t  -17  \r\n# HELP a Multi\\nline \\\\ \\x\n   \n a 3";
    let e = ok(body);
    let a = e.family("a").unwrap();
    assert_eq!(a.kind, MetricType::Gauge);
    // Unknown escapes stay literal in HELP.
    assert_eq!(a.help.as_deref(), Some("Multi\nline \\ \\x"));
    assert_eq!(a.samples.len(), 2);
    assert_eq!(a.samples[0].labels, labels(&[("b", "1")]));
    assert_eq!(a.samples[0].value, 2.5);
    assert_eq!(a.samples[0].timestamp_ms, Some(-17));
    assert_eq!(a.samples[1].value, 3.0);
}

#[test]
fn values_in_go_parsefloat_syntax() {
    let cases: [(&str, f64); 12] = [
        ("1027", 1027.0),
        ("1.7560473e+07", 17_560_473.0),
        ("-2E-3", -0.002),
        (".5", 0.5),
        ("5.", 5.0),
        ("+Inf", f64::INFINITY),
        ("-Inf", f64::NEG_INFINITY),
        ("Inf", f64::INFINITY),
        ("inf", f64::INFINITY),
        ("+infinity", f64::INFINITY),
        ("0", 0.0),
        ("-0.0", 0.0),
    ];
    for (text, want) in cases {
        let e = ok(&format!("m {text}\n"));
        assert_eq!(e.families[0].samples[0].value, want, "{text}");
    }
    // Go's hex floats: 0x1.8p3 = 1.5 × 8; 0x10p-4 = 16/16; 0x_ffp0 = 255; the smallest
    // subnormal is 2^-1074.
    for (text, want) in [
        ("0x1.8p3", 12.0),
        ("-0x10p-4", -1.0),
        ("0X_ffP0", 255.0),
        ("0x0p99999", 0.0),
        ("0x1p-1074", 5e-324),
    ] {
        assert_eq!(
            ok(&format!("m {text}\n")).families[0].samples[0].value,
            want,
            "{text}"
        );
    }
    for nan in ["NaN", "nan", "NAN"] {
        assert!(
            ok(&format!("m {nan}\n")).families[0].samples[0]
                .value
                .is_nan()
        );
    }
    for bad in [
        "abc",
        "1,5",
        "0x",
        "0x1",
        "0xp1",
        "0x1.2.3p0",
        "0x1pq",
        "1e",
        "--1",
        "1_000",
    ] {
        let e = err(&format!("m 1\nm{{a=\"b\"}} {bad}\n"));
        assert_eq!(e.line, 2, "{bad}");
        assert!(e.message.contains("is not a number"), "{bad}: {e}");
    }
}

#[test]
fn label_escapes_utf8_trailing_comma_and_quoted_names() {
    let body = "m{path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",n=\"a\\nb\",u=\"é✓\",o=\"\\t\",} 1\n\
        {\"my.metric\",a=\"b\"} 2\n\
        {\"my.metric\", \"odd.label\"=\"x\"} 3\n";
    let e = ok(body);
    let m = &e.family("m").unwrap().samples[0];
    assert_eq!(
        m.labels,
        labels(&[
            ("n", "a\nb"),
            ("o", "\\t"),
            ("path", "C:\\dir"),
            ("q", "say \"hi\""),
            ("u", "é✓"),
        ])
    );
    let dotted = e.family("my.metric").unwrap();
    assert_eq!(dotted.samples.len(), 2);
    assert_eq!(dotted.samples[1].labels, labels(&[("odd.label", "x")]));
    // Quoted names in TYPE lines too.
    let e = ok("# TYPE \"my.metric\" gauge\n{\"my.metric\"} 1\n");
    assert_eq!(e.families[0].kind, MetricType::Gauge);
}

#[test]
fn repeated_series_keeps_the_last_and_label_order_does_not_matter() {
    let e = ok("# TYPE h histogram\n\
        h_bucket{le=\"1\",a=\"x\"} 1\nh_bucket{a=\"x\",le=\"1\"} 5\nh_bucket{a=\"y\",le=\"1\"} 2\nh_count 9\nh_count 7 123\n");
    let h = e.family("h").unwrap();
    assert_eq!(h.samples.len(), 3);
    assert_eq!(h.samples[0].value, 5.0);
    assert_eq!(h.samples[1].value, 2.0);
    assert_eq!(h.samples[2].value, 7.0);
    assert_eq!(h.samples[2].timestamp_ms, Some(123));
}

#[test]
fn errors_name_the_line() {
    let cases: [(&str, usize, &str); 14] = [
        ("a 1\nb{x=\"1} 2\n", 2, "unterminated value of label `x`"),
        ("a 1\n\nb{x=\"1\" 2\n", 3, "expected `,` or `}`"),
        ("a 1\nb{x=1} 2\n", 2, "not quoted"),
        ("a 1\nb{x} 2\n", 2, "expected `=`"),
        ("a\n", 1, "without a value"),
        ("a 1 2 3\n", 1, "unexpected text"),
        ("a 1 1.5\n", 1, "integer of milliseconds"),
        ("a 1\n# TYPE a gauge\n", 2, "after its samples"),
        (
            "h_bucket{le=\"1\"} 1\n# TYPE h histogram\n",
            2,
            "after its samples",
        ),
        ("# TYPE a gauge\n# TYPE a counter\n", 2, "second TYPE"),
        ("# HELP a x\n# HELP a y\n", 2, "second HELP"),
        ("# TYPE a gauges\n", 1, "unknown metric type `gauges`"),
        ("a{b=\"1\",b=\"2\"} 1\n", 1, "repeated"),
        ("1a 2\n", 1, "does not start with a metric name"),
    ];
    for (body, line, needle) in cases {
        let e = err(body);
        assert_eq!(e.line, line, "{body:?}: {e}");
        assert!(e.message.contains(needle), "{body:?}: {e}");
    }
    assert!(err("a.b 1\n").message.contains("invalid character `.`"));
    assert!(
        err("{\"a\"} 1\n{\"b\",x=\"1\",\"c\"} 1\n")
            .message
            .contains("first item")
    );
    assert!(err("# TYPE\n").message.contains("without a metric name"));
}

#[test]
fn trtllm_json_body_fails_at_line_one() {
    for body in [
        "[{\"gpuMemUsage\": 123, \"iter\": 4}]",
        "  \n{\"iterationStats\": []}\n",
    ] {
        let e = err(body);
        assert_eq!(e.line, 1);
        assert!(e.message.contains("JSON, not Prometheus text"), "{e}");
    }
}

#[test]
fn empty_body_is_an_empty_exposition() {
    assert!(ok("").families.is_empty());
    assert_eq!(ok("\u{feff}a 1\n").families[0].name, "a");
    assert!(ok("\n# just a comment\n").families.is_empty());
}

#[test]
fn hundred_kilobyte_body_parses() {
    let mut body = String::new();
    body.push_str("# TYPE vllm:e2e_request_latency_seconds histogram\n");
    for e in 0..40 {
        for (i, le) in ["0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "+Inf"]
            .iter()
            .enumerate()
        {
            body.push_str(&format!(
                "vllm:e2e_request_latency_seconds_bucket{{engine=\"{e}\",le=\"{le}\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"}} {}.0\n",
                i * 10
            ));
        }
    }
    assert!(body.len() > 20_000);
    let e = ok(&body);
    assert_eq!(e.families[0].samples.len(), 280);
}

// ---- generated bodies ----

type Labels = Vec<(String, String)>;
/// A sample as compared: name, labels, value bits (NaN canonical), timestamp.
type Flat = (String, Labels, u64, Option<i64>);

#[derive(Clone, Debug)]
struct GenFamily {
    kind: MetricType,
    suffix: String,
    series: Vec<(Labels, f64, Option<i64>)>,
}

fn label_value() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z0-9 \"\\\\\n:é✓{}=,#]{0,8}").unwrap()
}

fn gen_family() -> impl Strategy<Value = GenFamily> {
    let kind = prop_oneof![
        Just(MetricType::Counter),
        Just(MetricType::Gauge),
        Just(MetricType::Untyped),
        Just(MetricType::Histogram),
        Just(MetricType::Summary),
    ];
    let value = prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        (0u32..100_000).prop_map(f64::from),
    ];
    let series = proptest::collection::vec(
        (
            proptest::collection::vec(("[a-zA-Z_][a-zA-Z0-9_]{0,4}", label_value()), 0..4),
            value,
            proptest::option::of(any::<i64>()),
        ),
        1..5,
    );
    (kind, "[a-z:_]{0,6}", series).prop_map(|(kind, suffix, series)| GenFamily {
        kind,
        suffix,
        series,
    })
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn type_name(kind: MetricType) -> &'static str {
    match kind {
        MetricType::Counter => "counter",
        MetricType::Gauge => "gauge",
        MetricType::Histogram => "histogram",
        MetricType::Summary => "summary",
        _ => "untyped",
    }
}

/// Renders generated families as 0.0.4 text or OpenMetrics (counter samples `_total`,
/// timestamps in seconds, `# EOF`), and the samples a parser must return (duplicate label
/// names dropped, labels sorted, a repeated series keeping the last).
fn render(fams: &[GenFamily], om: bool) -> (String, Vec<Vec<Flat>>) {
    let mut text = String::new();
    let mut want = Vec::new();
    for (i, f) in fams.iter().enumerate() {
        // `m{i}_` keeps one family's name from being another's name plus a suffix.
        let name = format!("m{i}_{}", f.suffix);
        text.push_str(&format!(
            "# HELP {name} help \\\\ {i}\n# TYPE {name} {}\n",
            type_name(f.kind)
        ));
        let mut samples: Vec<Flat> = Vec::new();
        for (j, (ls, v, ts)) in f.series.iter().enumerate() {
            let sample_name = match (f.kind, j % 3) {
                (MetricType::Histogram, 0) => format!("{name}_bucket"),
                (MetricType::Histogram | MetricType::Summary, 1) => format!("{name}_sum"),
                (MetricType::Histogram | MetricType::Summary, 2) => format!("{name}_count"),
                (MetricType::Counter, _) if om => format!("{name}_total"),
                _ => name.clone(),
            };
            let mut ls = ls.clone();
            ls.sort_by(|a, b| a.0.cmp(&b.0));
            ls.dedup_by(|a, b| a.0 == b.0);
            let body: Vec<String> = ls
                .iter()
                .rev()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            // OpenMetrics seconds with three decimals, in a range f64 carries exactly.
            let ts = ts.map(|t| if om { t % 10_000_000_000_000 } else { t });
            let ts_text = match ts {
                Some(t) if om => {
                    let sign = if t < 0 { "-" } else { "" };
                    let a = t.unsigned_abs();
                    format!(" {sign}{}.{:03}", a / 1000, a % 1000)
                }
                Some(t) => format!(" {t}"),
                None => String::new(),
            };
            text.push_str(&format!(
                "{sample_name}{{{}}} {v:?}{ts_text}\n",
                body.join(",")
            ));
            let bits = if v.is_nan() {
                f64::NAN.to_bits()
            } else {
                v.to_bits()
            };
            match samples.iter_mut().find(|s| s.0 == sample_name && s.1 == ls) {
                Some(s) => {
                    s.2 = bits;
                    s.3 = ts;
                }
                None => samples.push((sample_name, ls, bits, ts)),
            }
        }
        want.push(samples);
    }
    if om {
        text.push_str("# EOF\n");
    }
    (text, want)
}

proptest! {
    #[test]
    fn round_trip(fams in proptest::collection::vec(gen_family(), 0..6), om in any::<bool>()) {
        let (text, want) = render(&fams, om);
        let e = parse(&text, None).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(e.format, if om { Format::OpenMetrics } else { Format::Text004 });
        prop_assert_eq!(e.families.len(), fams.len());
        for (i, ((f, g), w)) in e.families.iter().zip(&fams).zip(&want).enumerate() {
            prop_assert_eq!(f.kind, g.kind);
            prop_assert_eq!(f.help.clone(), Some(format!("help \\ {i}")));
            let got: Vec<_> = f
                .samples
                .iter()
                .map(|s| {
                    let bits = if s.value.is_nan() { f64::NAN.to_bits() } else { s.value.to_bits() };
                    (s.name.clone(), s.labels.clone(), bits, s.timestamp_ms)
                })
                .collect();
            prop_assert_eq!(&got, w);
        }
    }

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}", om in any::<bool>()) {
        let ct = om.then_some("application/openmetrics-text");
        let _ = parse(&text, ct);
    }

    #[test]
    fn never_panics_on_near_valid_bodies(
        fams in proptest::collection::vec(gen_family(), 1..4),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, "[ {}\"\\\\=,#\n.a0é]"), 1..6),
        eof in any::<bool>(),
    ) {
        let (text, _) = render(&fams, eof);
        let mut chars: Vec<char> = text.chars().collect();
        for (at, op, with) in edits {
            if chars.is_empty() {
                break;
            }
            let i = at.index(chars.len());
            let c = with.chars().next().unwrap_or(' ');
            match op {
                0 => { chars.remove(i); }
                1 => chars.insert(i, c),
                _ => chars[i] = c,
            }
        }
        let text: String = chars.into_iter().collect();
        let _ = parse(&text, None);
    }
}

/// A vLLM-sized body (~100 KB): 16 histograms × 2 engines × 20 buckets, their `_created`
/// gauge families, 12 counters with theirs, 4 gauges; all in prometheus_client's shape.
fn vllm_sized_body() -> String {
    const M: &str = "model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";
    let mut body = String::new();
    for h in 0..16 {
        let name = format!("vllm:histogram_number_{h}_seconds");
        body.push_str(&format!(
            "# HELP {name} Histogram {h} in seconds.\n# TYPE {name} histogram\n"
        ));
        for e in 0..2 {
            for b in 0..19 {
                let le = 0.001 * f64::from(1u32 << (b / 2)) * if b % 2 == 0 { 1.0 } else { 2.5 };
                body.push_str(&format!(
                    "{name}_bucket{{engine=\"{e}\",le=\"{le}\",{M}}} {}.0\n",
                    b * 7
                ));
            }
            body.push_str(&format!(
                "{name}_bucket{{engine=\"{e}\",le=\"+Inf\",{M}}} 140.0\n"
            ));
            body.push_str(&format!("{name}_count{{engine=\"{e}\",{M}}} 140.0\n"));
            body.push_str(&format!("{name}_sum{{engine=\"{e}\",{M}}} 12.3456789\n"));
        }
        body.push_str(&format!(
            "# HELP {name}_created Histogram {h} in seconds.\n# TYPE {name}_created gauge\n"
        ));
        for e in 0..2 {
            body.push_str(&format!(
                "{name}_created{{engine=\"{e}\",{M}}} 1.7560473212e+09\n"
            ));
        }
    }
    for c in 0..12 {
        let name = format!("vllm:counter_number_{c}");
        for (suffix, kind, v) in [
            ("_total", "counter", "1027.0"),
            ("_created", "gauge", "1.7560473212e+09"),
        ] {
            body.push_str(&format!(
                "# HELP {name}{suffix} Counter {c}.\n# TYPE {name}{suffix} {kind}\n"
            ));
            for e in 0..2 {
                body.push_str(&format!("{name}{suffix}{{engine=\"{e}\",{M}}} {v}\n"));
            }
        }
    }
    for g in 0..4 {
        body.push_str(&format!(
            "# HELP vllm:gauge_{g} Gauge.\n# TYPE vllm:gauge_{g} gauge\n"
        ));
        for e in 0..2 {
            body.push_str(&format!("vllm:gauge_{g}{{engine=\"{e}\",{M}}} 3.0\n"));
        }
    }
    body
}

#[test]
fn vllm_sized_body_groups_every_sample() {
    let body = vllm_sized_body();
    assert!(body.len() > 90_000, "{}", body.len());
    let e = ok(&body);
    // 16 histograms + 16 `_created` + 24 counter/created families + 4 gauges.
    assert_eq!(e.families.len(), 16 * 2 + 12 * 2 + 4);
    let h = e.family("vllm:histogram_number_3_seconds").unwrap();
    // 2 engines × (20 buckets + count + sum).
    assert_eq!(h.samples.len(), 44);
    let total: usize = e.families.iter().map(|f| f.samples.len()).sum();
    assert_eq!(total, 16 * 44 + 16 * 2 + 24 * 2 + 4 * 2);
}

/// Timing, not a check of speed (debug builds vary); the parse itself is asserted.
/// `cargo test -p inferbench-telemetry --lib parse_speed -- --ignored --nocapture`
#[test]
#[ignore = "timing"]
fn parse_speed() {
    let body = vllm_sized_body();
    let n = 50;
    let t = std::time::Instant::now();
    for _ in 0..n {
        assert_eq!(ok(&body).families.len(), 60);
    }
    let each = t.elapsed() / n;
    eprintln!(
        "{} bytes parsed in {each:?} each ({:.1} MB/s)",
        body.len(),
        body.len() as f64 / each.as_secs_f64() / 1e6
    );
}

#[test]
fn interrupted_family_is_rejoined_and_help_may_follow_samples() {
    let e =
        ok("# TYPE a counter\na_total 1\n# TYPE b gauge\nb 2\na_total{x=\"1\"} 3\n# HELP a late\n");
    assert_eq!(e.families.len(), 2);
    let a = e.family("a").unwrap();
    assert_eq!(a.samples.len(), 2);
    assert_eq!(a.samples[1].value, 3.0);
    assert_eq!(a.help.as_deref(), Some("late"));
}
