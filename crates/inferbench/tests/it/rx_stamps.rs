//! Kernel receive timestamps end to end (docs/timing.md, "Kernel receive timestamps"): every
//! read of a run against the simulated server is timed by the kernel's arrival stamp, its lag
//! is counted in the client-resources file, and the stamps keep the record's order.

use crate::common::{evidence_records, read_json, run, stderr, tmpdir};

#[cfg(target_os = "linux")]
#[test]
fn every_read_is_kernel_stamped_and_its_lag_counted() {
    let dir = tmpdir("rx-stamps");
    let d = dir.display().to_string();
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "--endpoint-type",
        "chat",
        "--streaming",
        "--isl",
        "16",
        "--osl",
        "8",
        "--extra-inputs",
        "ignore_eos:true",
        "--concurrency",
        "4",
        "--request-count",
        "40",
        "--ui",
        "none",
        "--artifact-dir",
        &d,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let q = &read_json(&dir.join("inferbench_client_resources.json"))["summary"]["queues"];
    // 40 streamed responses of 8 tokens: at least one read each (a head and its events may
    // share one), however the kernel coalesced the segments.
    let reads = q["reads"].as_u64().expect("reads counted");
    assert!(reads >= 40, "{q}");
    // Linux stamps every segment once the engine asked (rx_stamp::warm before the first
    // connection), so no read falls back to its user-space time.
    assert_eq!(q["kernel_stamped_fraction"].as_f64(), Some(1.0), "{q}");
    let over_1ms = q["read_lag_over_1ms_fraction"].as_f64().expect("a share");
    assert!((0.0..=1.0).contains(&over_1ms), "{q}");
    assert!(q["read_lag_max_ns"].as_u64().is_some(), "{q}");
    // Arrival stamps keep each record's order: start ≤ ack ≤ every frame ≤ end, frames in
    // order (a frame can share its predecessor's read, never precede it).
    let recs = evidence_records(&dir);
    assert_eq!(recs.len(), 40);
    for r in &recs {
        let start = r["start_ns"].as_u64().unwrap();
        let ack = r["ack_ns"].as_u64().unwrap();
        let end = r["end_ns"].as_u64().unwrap();
        assert!(start <= ack && ack <= end, "{r}");
        let mut prev = ack;
        for f in r["frames"].as_array().unwrap() {
            let t = f["t_ns"].as_u64().unwrap();
            assert!(prev <= t && t <= end, "{r}");
            prev = t;
        }
        // A complete body ends at the read that carried its last bytes: the last frame's,
        // or the later one that brought the chunked body's terminator.
        assert!(prev <= end, "{r}");
    }
}
