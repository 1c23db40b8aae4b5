use inferbench_telemetry::scrape::read_scrapes;

use super::*;

#[test]
fn counter_rates_by_hand() {
    // 0 → 10 over 2 s = 5/s at t=2; 10 → 10 over 1 s = 0/s at t=3; 10 → 4 is a reset: no
    // rate; 4 → 10 over 0.5 s = 12/s at t=4.5; a repeated instant gives nothing.
    let s = [
        (0.0, 0.0),
        (2.0, 10.0),
        (3.0, 10.0),
        (4.0, 4.0),
        (4.5, 10.0),
        (4.5, 11.0),
    ];
    assert_eq!(counter_rates(&s), vec![(2.0, 5.0), (3.0, 0.0), (4.5, 12.0)]);
    assert!(counter_rates(&[(1.0, 3.0)]).is_empty());
    assert!(counter_rates(&[]).is_empty());
}

#[test]
fn varies_needs_two_points_and_a_change() {
    assert!(!varies(&[(0.0, 1.0)]));
    assert!(!varies(&[(0.0, 1.0), (1.0, 1.0)]));
    assert!(varies(&[(0.0, 1.0), (1.0, 1.0), (2.0, 2.0)]));
}

/// A scrape file line by line: two server scrapes 0.5 s apart and one GPU scrape.
fn log() -> ScrapeLog {
    let body0 = "# TYPE q gauge\\nq{engine=\\\"0\\\"} 2\\nq{engine=\\\"1\\\"} 0\\n# TYPE tok counter\\ntok_total 100\\n# TYPE h histogram\\nh_bucket{le=\\\"+Inf\\\"} 1\\nh_sum 1\\nh_count 1\\n# TYPE r gauge\\nr NaN\\n";
    let body1 = "# TYPE q gauge\\nq{engine=\\\"0\\\"} 5\\nq{engine=\\\"1\\\"} 0\\n# TYPE tok counter\\ntok_total 150\\n";
    let text = format!(
        concat!(
            "{{\"header\":{{\"schema_version\":1,\"anchor_unix_ns\":1000,\"targets\":[",
            "{{\"index\":0,\"kind\":\"server\",\"origin\":\"flag\",\"url\":\"u\",\"interval_ns\":1}},",
            "{{\"index\":1,\"kind\":\"gpu\",\"origin\":\"flag\",\"url\":\"g\",\"interval_ns\":1}}]}}}}\n",
            "{{\"scrape\":{{\"target\":0,\"seq\":0,\"trigger\":\"start\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":3000000000,\"status\":200,\"body\":\"{b0}\"}}}}\n",
            "{{\"scrape\":{{\"target\":1,\"seq\":0,\"trigger\":\"start\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":3100000000,\"status\":200,\"body\":\"# TYPE g gauge\\ng 7\\n\"}}}}\n",
            "{{\"scrape\":{{\"target\":0,\"seq\":1,\"trigger\":\"interval\",\"send_ns\":0,\"end_ns\":2,\"wall_unix_ns\":3200000000,\"error\":\"timeout\"}}}}\n",
            "{{\"scrape\":{{\"target\":0,\"seq\":2,\"trigger\":\"end\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":3500000000,\"status\":200,\"body\":\"{b1}\"}}}}\n",
        ),
        b0 = body0,
        b1 = body1
    );
    read_scrapes(text.as_bytes()).expect("scrape file")
}

#[test]
fn series_from_a_scrape_file_by_hand() {
    // Time origin at 2.5 s: the server scrapes sit at 0.5 s and 1.0 s (the failed one at
    // 0.7 s is skipped, the GPU target is not a server).
    let s = server_series(&log(), 2_500_000_000);
    let names: Vec<(&str, &str)> = s
        .iter()
        .map(|m| (m.family.as_str(), m.labels.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![("q", "engine=\"0\""), ("q", "engine=\"1\""), ("tok", "")]
    );
    assert_eq!(s[0].points, vec![(0.5, 2.0), (1.0, 5.0)]);
    assert_eq!(s[1].points, vec![(0.5, 0.0), (1.0, 0.0)]);
    // 100 → 150 tokens over 0.5 s: 100/s, at the later scrape.
    assert_eq!(s[2].kind, "counter");
    assert_eq!(s[2].points, vec![(1.0, 100.0)]);
}

#[test]
fn charts_keep_families_that_vary() {
    let s = server_series(&log(), 2_500_000_000);
    let (charts, flat) = server_charts(&s, 10);
    // q varies on engine 0 (both label sets drawn); tok has one rate point only.
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].title, "q");
    assert_eq!(charts[0].series.len(), 2);
    assert_eq!(flat, vec!["tok".to_string()]);
    let (none, flat) = server_charts(&s, 0);
    assert!(none.is_empty());
    assert_eq!(flat.len(), 2);
}

/// Two scrapes of one DCGM target 2 s apart, two GPUs each with the labels a DCGM exporter
/// sets, and one server scrape in between that the GPU series must not pick up.
fn dcgm_log() -> ScrapeLog {
    let page = |u0: u32, u1: u32, e0: u64, e1: u64| {
        format!(
            concat!(
                "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\\n",
                "DCGM_FI_DEV_GPU_UTIL{{gpu=\\\"0\\\",UUID=\\\"GPU-a\\\",device=\\\"nvidia0\\\",modelName=\\\"H100\\\",Hostname=\\\"h\\\"}} {}\\n",
                "DCGM_FI_DEV_GPU_UTIL{{gpu=\\\"1\\\",UUID=\\\"GPU-b\\\",device=\\\"nvidia1\\\",modelName=\\\"H100\\\",Hostname=\\\"h\\\"}} {}\\n",
                "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\\n",
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu=\\\"0\\\",UUID=\\\"GPU-a\\\",device=\\\"nvidia0\\\"}} {}\\n",
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu=\\\"1\\\",UUID=\\\"GPU-b\\\",device=\\\"nvidia1\\\"}} {}\\n",
            ),
            u0, u1, e0, e1
        )
    };
    let text = format!(
        concat!(
            "{{\"header\":{{\"schema_version\":1,\"anchor_unix_ns\":1000,\"targets\":[",
            "{{\"index\":0,\"kind\":\"gpu\",\"origin\":\"flag\",\"url\":\"g\",\"interval_ns\":1}},",
            "{{\"index\":1,\"kind\":\"server\",\"origin\":\"flag\",\"url\":\"u\",\"interval_ns\":1}}]}}}}\n",
            "{{\"scrape\":{{\"target\":0,\"seq\":0,\"trigger\":\"start\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":1000000000,\"status\":200,\"body\":\"{p0}\"}}}}\n",
            "{{\"scrape\":{{\"target\":1,\"seq\":0,\"trigger\":\"start\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":2000000000,\"status\":200,\"body\":\"# TYPE q gauge\\nq 3\\n\"}}}}\n",
            "{{\"scrape\":{{\"target\":0,\"seq\":1,\"trigger\":\"end\",\"send_ns\":0,\"first_byte_ns\":1,\"end_ns\":2,\"wall_unix_ns\":3000000000,\"status\":200,\"body\":\"{p1}\"}}}}\n",
        ),
        p0 = page(10, 0, 1000, 500),
        p1 = page(90, 0, 1600, 500)
    );
    read_scrapes(text.as_bytes()).expect("scrape file")
}

#[test]
fn gpu_series_one_per_gpu_by_hand() {
    // Origin at 1 s: the GPU scrapes sit at 0 s and 2 s; the server's q is not a GPU series.
    let s = gpu_series(&dcgm_log(), 1_000_000_000);
    let names: Vec<(&str, &str)> = s
        .iter()
        .map(|m| (m.family.as_str(), m.labels.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("DCGM_FI_DEV_GPU_UTIL", "UUID=\"GPU-a\",gpu=\"0\""),
            ("DCGM_FI_DEV_GPU_UTIL", "UUID=\"GPU-b\",gpu=\"1\""),
            (
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "UUID=\"GPU-a\",gpu=\"0\""
            ),
            (
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "UUID=\"GPU-b\",gpu=\"1\""
            ),
        ]
    );
    assert_eq!(s[0].points, vec![(0.0, 10.0), (2.0, 90.0)]);
    assert_eq!(s[1].points, vec![(0.0, 0.0), (2.0, 0.0)]);
    // GPU 0: 1000 → 1600 mJ over 2 s = 300 mJ/s; GPU 1 did not move: 0/s.
    assert_eq!(s[2].points, vec![(2.0, 300.0)]);
    assert_eq!(s[3].points, vec![(2.0, 0.0)]);
    // Only GPU utilization varies with two points: one chart, both GPUs on it.
    let (charts, flat) = server_charts(&s, 10);
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].title, "DCGM_FI_DEV_GPU_UTIL");
    assert_eq!(charts[0].series.len(), 2);
    assert_eq!(
        flat,
        vec!["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION".to_string()]
    );
}
