//! `--per-chunk-usage` end to end against the simulated server: the body asks for
//! `continuous_usage_stats`, the server puts the usage so far on every chunk, the evidence
//! header records the flag, and ITL is `(latency − TTFT) / (OSL − first chunk's count)`,
//! recomputed here from the evidence events.

use crate::common::{MockServer, evidence_lines, jsonl, read_json, run, stderr, tmpdir};

fn args<'a>(url: &'a str, dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "profile",
        "-m",
        "mock-model",
        "-u",
        url,
        "--endpoint-type",
        "chat",
        "--streaming",
        "--request-count",
        "3",
        "--concurrency",
        "1",
        "--isl",
        "8",
        "--osl",
        "7",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--artifact-dir",
        dir,
    ];
    a.extend_from_slice(extra);
    a
}

#[test]
fn per_chunk_usage_reaches_the_body_the_evidence_and_itl() {
    let server = MockServer::start(&["--tokens-per-chunk", "3"]);
    let dir = tmpdir("per-chunk");
    let d = dir.to_str().unwrap();
    let o = run(&args(
        &server.url,
        d,
        &["--use-server-token-count", "--per-chunk-usage"],
    ));
    assert!(o.status.success(), "{}", stderr(&o));

    let inputs = read_json(&dir.join("inputs.json"));
    for e in inputs["data"].as_array().unwrap() {
        for p in e["payloads"].as_array().unwrap() {
            assert_eq!(
                p["stream_options"],
                serde_json::json!({"include_usage": true, "continuous_usage_stats": true}),
                "{p}"
            );
        }
    }
    let lines = evidence_lines(&dir);
    assert_eq!(lines[0]["line"], "header");
    assert_eq!(lines[0]["per_chunk_usage"], true, "{}", lines[0]);

    let mut by_hand = Vec::new();
    for r in lines.iter().filter(|l| l["line"] == "record") {
        let events = r["events"].as_array().unwrap();
        let content: Vec<_> = events
            .iter()
            .filter(|e| e["content"].as_str().is_some_and(|c| !c.is_empty()))
            .collect();
        // 7 tokens at 3 per chunk after the first: chunks of 1, 3, 3, each with the count so far.
        let counts: Vec<u64> = content
            .iter()
            .map(|e| {
                e["usage"]["completion_tokens"]
                    .as_u64()
                    .expect("usage on every chunk")
            })
            .collect();
        assert_eq!(counts, [1, 4, 7], "{r}");
        let start = r["start_ns"].as_u64().unwrap();
        let first = content[0]["t_ns"].as_u64().unwrap();
        let last = content[content.len() - 1]["t_ns"].as_u64().unwrap();
        let osl = 7.0;
        by_hand.push((last - first) as f64 / (osl - counts[0] as f64) / 1e6);
        assert!(first > start);
    }
    assert_eq!(by_hand.len(), 3);
    let mut reported: Vec<f64> = jsonl(&dir.join("profile_export.jsonl"))
        .iter()
        .map(|r| {
            r["metrics"]["inter_token_latency"]["value"]
                .as_f64()
                .unwrap()
        })
        .collect();
    let key = |a: &f64, b: &f64| a.partial_cmp(b).unwrap();
    reported.sort_by(key);
    by_hand.sort_by(key);
    for (a, b) in reported.iter().zip(&by_hand) {
        assert!((a - b).abs() < 1e-9, "ITL {a} ms, by hand {b} ms");
    }
}

#[test]
fn per_chunk_usage_without_server_counts_is_refused_before_any_file() {
    let server = MockServer::start(&[]);
    let dir = tmpdir("per-chunk-refused");
    let d = dir.join("out");
    let o = run(&args(
        &server.url,
        d.to_str().unwrap(),
        &["--per-chunk-usage"],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--per-chunk-usage requires --use-server-token-count"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!d.join("inferbench_evidence.jsonl").exists());
}
