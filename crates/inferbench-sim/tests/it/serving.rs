//! The scheduler, `/metrics` and `/dcgm/metrics` against a server on 127.0.0.1:0, with the
//! exposition read by hand (name, labels, value per line).

use std::time::Duration;

use inferbench_sim::{Serving, SimConfig, SimServer};
use serde_json::Value;
use tokio::time::{Instant, timeout};

use crate::common;

use common::*;

/// Every sample line `name{labels} value` whose labels contain each of `with`, summed.
fn sum(text: &str, name: &str, with: &[&str]) -> f64 {
    let mut total = 0.0;
    let mut seen = false;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let (n, labels) = series.split_once('{').unwrap_or((series, ""));
        if n == name && with.iter().all(|w| labels.contains(w)) {
            total += value.parse::<f64>().expect("a number");
            seen = true;
        }
    }
    assert!(seen, "no {name} {with:?} in\n{text}");
    total
}

async fn scrape(server: &SimServer, path: &str) -> String {
    let r = call(server.local_addr(), "GET", path, "").await;
    assert_eq!(r.status, 200);
    // Both pages are Prometheus text 0.0.4.
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    String::from_utf8(r.body).unwrap()
}

fn chat(tokens: usize, stream: bool) -> String {
    format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"one two three four"}}],"max_tokens":{tokens},"stream":{stream},"stream_options":{{"include_usage":true}}}}"#
    )
}

/// `usage.completion_tokens` and `usage.prompt_tokens` a response reported.
fn reported(r: &Resp) -> (u64, u64) {
    let usage = if r.events.is_empty() {
        r.json()["usage"].clone()
    } else {
        r.chunks()
            .iter()
            .rev()
            .find_map(|c| c.get("usage").filter(|u| !u.is_null()).cloned())
            .expect("a usage event")
    };
    let n = |k: &str| usage[k].as_u64().unwrap();
    (n("completion_tokens"), n("prompt_tokens"))
}

#[tokio::test]
async fn generation_tokens_grow_by_the_completion_tokens_reported() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let before = scrape(&server, "/metrics").await;
        let g0 = sum(&before, "vllm:generation_tokens_total", &[]);
        let p0 = sum(&before, "vllm:prompt_tokens_total", &[]);
        let mut completion = 0;
        let mut prompt = 0;
        let mut c = Client::connect(server.local_addr()).await;
        for (path, body) in [
            ("/v1/chat/completions", chat(16, true)),
            ("/v1/chat/completions", chat(7, false)),
            (
                "/v1/completions",
                r#"{"model":"m","prompt":"x y","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}"#.to_owned(),
            ),
            ("/v1/completions", r#"{"model":"m","prompt":"x y z","max_tokens":3}"#.to_owned()),
            ("/v1/chat/completions", chat(1, true)),
        ] {
            let r = c.call("POST", path, &body).await;
            assert_eq!(r.status, 200, "{path}");
            let (out, inp) = reported(&r);
            completion += out;
            prompt += inp;
        }
        // 16 + 7 + 5 + 3 + 1.
        assert_eq!(completion, 32);
        let after = scrape(&server, "/metrics").await;
        let g1 = sum(&after, "vllm:generation_tokens_total", &[]);
        assert_eq!(g1 - g0, completion as f64);
        assert_eq!(sum(&after, "vllm:prompt_tokens_total", &[]) - p0, prompt as f64);
        // Every request finished at its max_tokens: `length`; TTFT and e2e once each.
        assert_eq!(
            sum(&after, "vllm:request_success_total", &["finished_reason=\"length\""]),
            5.0
        );
        assert_eq!(sum(&after, "vllm:time_to_first_token_seconds_count", &[]), 5.0);
        assert_eq!(sum(&after, "vllm:e2e_request_latency_seconds_count", &[]), 5.0);
        // One ITL observation per token after each request's first: 32 − 5.
        assert_eq!(sum(&after, "vllm:inter_token_latency_seconds_count", &[]), 27.0);
        assert_eq!(
            sum(
                &after,
                "vllm:inter_token_latency_seconds_bucket",
                &["le=\"+Inf\""]
            ),
            27.0
        );
        assert_eq!(sum(&after, "vllm:num_requests_running", &[]), 0.0);
        assert_eq!(sum(&after, "vllm:kv_cache_usage_perc", &[]), 0.0);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

/// Sends `body` on its own connection; returns (TTFT, the response).
async fn timed_call(addr: std::net::SocketAddr, body: String) -> (Duration, Resp) {
    let mut c = Client::connect(addr).await;
    let sent = c.send("POST", "/v1/chat/completions", &body).await;
    let r = c.response().await;
    let first = r.events.first().expect("an event").0;
    (first - sent, r)
}

#[tokio::test]
async fn a_running_limit_queues_the_rest_and_the_wait_shows_in_ttft() {
    timeout(LIMIT, async {
        // Each request: first token 10 ms after it starts, then 3 × 40 ms: 130 ms running.
        let server = start(SimConfig {
            ttft: Duration::from_millis(10),
            itl: Duration::from_millis(40),
            serving: Serving {
                max_running: Some(2),
                ..Serving::default()
            },
            ..cfg()
        })
        .await;
        let addr = server.local_addr();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..6 {
            set.spawn(timed_call(addr, chat(4, true)));
        }
        // While the first pair runs, the other four wait.
        let t = Instant::now();
        let (running, waiting) = loop {
            let m = scrape(&server, "/metrics").await;
            let rw = (
                sum(&m, "vllm:num_requests_running", &[]),
                sum(&m, "vllm:num_requests_waiting", &[]),
            );
            if rw == (2.0, 4.0) || t.elapsed() > Duration::from_millis(100) {
                break rw;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        assert_eq!((running, waiting), (2.0, 4.0));
        let mut ttft = Vec::new();
        while let Some(r) = set.join_next().await {
            let (d, resp) = r.unwrap();
            assert!(resp.complete && resp.done());
            ttft.push(d);
        }
        ttft.sort();
        // Pairs start at 0, 130 and 260 ms; a client-side skew of a few ms between the six
        // sends is allowed for.
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        assert!(ms(ttft[1]) < 130.0, "{ttft:?}");
        assert!(ms(ttft[2]) >= 130.0, "{ttft:?}");
        assert!(ms(ttft[4]) >= 260.0, "{ttft:?}");
        let m = scrape(&server, "/metrics").await;
        assert_eq!(sum(&m, "vllm:request_queue_time_seconds_count", &[]), 6.0);
        // Queue times ≈ 0, 0, 130, 130, 260, 260 ms: 780 ms, less the send skew.
        let queued = sum(&m, "vllm:request_queue_time_seconds_sum", &[]);
        assert!(queued >= 0.7, "{queued}");
        // The server's TTFT counts from arrival, so it holds the queue time too.
        assert!(sum(&m, "vllm:time_to_first_token_seconds_sum", &[]) >= queued + 0.06);
        assert_eq!(sum(&m, "vllm:num_requests_waiting", &[]), 0.0);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_decode_budget_stretches_every_stream_in_the_batch() {
    timeout(LIMIT, async {
        // Four streams share 100 tokens/s: each gap is max(5 ms, 4 / 100 s) = 40 ms.
        let server = start(SimConfig {
            ttft: Duration::from_millis(30),
            itl: Duration::from_millis(5),
            serving: Serving {
                decode_tokens_per_s: Some(100.0),
                ..Serving::default()
            },
            ..cfg()
        })
        .await;
        let addr = server.local_addr();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..4 {
            set.spawn(timed_call(addr, chat(6, true)));
        }
        while let Some(r) = set.join_next().await {
            let (_, resp) = r.unwrap();
            let tokens: Vec<Instant> = resp
                .events
                .iter()
                .filter(|(_, d)| d.contains("\"content\""))
                .map(|(t, _)| *t)
                .collect();
            assert_eq!(tokens.len(), 6);
            // Deadlines are absolute, so the last token is due 5 × 40 ms after the first's;
            // the first can only be late, which shortens the mean gap, hence the margin.
            let mean = (tokens[5] - tokens[0]).as_secs_f64() * 1e3 / 5.0;
            assert!((34.0..80.0).contains(&mean), "mean gap {mean} ms");
        }
        let m = scrape(&server, "/metrics").await;
        let mean = sum(&m, "vllm:inter_token_latency_seconds_sum", &[])
            / sum(&m, "vllm:inter_token_latency_seconds_count", &[]);
        assert!(mean >= 0.034, "{mean}");
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn the_reset_fault_restarts_every_counter_and_moves_created() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            serving: Serving {
                metrics_reset_after: Some(Duration::from_millis(300)),
                ..Serving::default()
            },
            ..cfg()
        })
        .await;
        let started = Instant::now();
        let r = call(
            server.local_addr(),
            "POST",
            "/v1/chat/completions",
            &chat(8, false),
        )
        .await;
        assert_eq!(r.status, 200);
        let m0 = scrape(&server, "/metrics").await;
        assert_eq!(sum(&m0, "vllm:generation_tokens_total", &[]), 8.0);
        let created0 = sum(&m0, "vllm:generation_tokens_created", &[]);
        let hist_created0 = sum(&m0, "vllm:e2e_request_latency_seconds_created", &[]);
        tokio::time::sleep_until(started + Duration::from_millis(450)).await;
        let m1 = scrape(&server, "/metrics").await;
        assert_eq!(sum(&m1, "vllm:generation_tokens_total", &[]), 0.0);
        assert_eq!(sum(&m1, "vllm:prompt_tokens_total", &[]), 0.0);
        assert_eq!(sum(&m1, "vllm:request_success_total", &[]), 0.0);
        assert_eq!(sum(&m1, "vllm:e2e_request_latency_seconds_count", &[]), 0.0);
        assert_eq!(
            sum(
                &m1,
                "vllm:time_to_first_token_seconds_bucket",
                &["le=\"+Inf\""]
            ),
            0.0
        );
        assert!(sum(&m1, "vllm:generation_tokens_created", &[]) > created0);
        assert!(sum(&m1, "vllm:e2e_request_latency_seconds_created", &[]) > hist_created0);
        // It keeps serving, counting from zero.
        let r = call(
            server.local_addr(),
            "POST",
            "/v1/chat/completions",
            &chat(3, false),
        )
        .await;
        assert_eq!(r.status, 200);
        let m2 = scrape(&server, "/metrics").await;
        assert_eq!(sum(&m2, "vllm:generation_tokens_total", &[]), 3.0);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn the_dcgm_page_lists_each_gpu_and_a_growing_energy_counter() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            serving: Serving {
                gpus: 3,
                ..Serving::default()
            },
            ..cfg()
        })
        .await;
        let a = scrape(&server, "/dcgm/metrics").await;
        assert!(a.contains("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
        assert!(a.contains("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"));
        for g in 0..3 {
            let gpu = format!("gpu=\"{g}\",");
            let dev = format!("device=\"nvidia{g}\"");
            assert_eq!(sum(&a, "DCGM_FI_DEV_POWER_USAGE", &[&gpu, &dev]), 60.0);
            assert_eq!(sum(&a, "DCGM_FI_DEV_GPU_UTIL", &[&gpu]), 0.0);
            assert_eq!(
                sum(&a, "DCGM_FI_DEV_MEMORY_TEMP", &[&gpu]),
                9223372036854775794.0
            );
        }
        assert_eq!(a.matches("DCGM_FI_DEV_SM_CLOCK{").count(), 3);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let b = scrape(&server, "/dcgm/metrics").await;
        let e = |t: &str| sum(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", &["gpu=\"0\""]);
        // At least 50 ms at 60 W idle: 3,000 mJ.
        assert!(e(&b) - e(&a) >= 2_999.0, "{} → {}", e(&a), e(&b));
        let v: Value = call(server.local_addr(), "GET", "/v1/models", "")
            .await
            .json();
        assert_eq!(v["object"], "list");
        server.shutdown().await;
    })
    .await
    .unwrap();
}
