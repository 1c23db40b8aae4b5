//! Server controls around a run (docs/controls.md): wait until the model is ready
//! (`--wait-for-model-timeout`, with its mode and interval) and reset the server's KV cache
//! before each run (`--reset-kv-cache`). Their requests go on connections of their own and
//! are never records, as in AIPerf.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use inferbench_client::Clock;
use inferbench_client::transport::{Conn, Target, TimedBody, connect};
use inferbench_core::controls_plan::{KvCacheReset, RESET_RETRY_BUDGET_S, WaitMode};
use inferbench_core::plan::EndpointType;
use serde_json::{Value, json};

use crate::{Failure, Prepared};

/// One control request's answer: the status and the body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    body: Bytes,
}

/// One request on a fresh connection, with the run's configured headers (auth included).
async fn send(
    clock: Clock,
    url: &str,
    body: Option<&[u8]>,
    p: &Prepared,
    timeout: Duration,
) -> Result<Answer, String> {
    send_with(clock, url, body, &p.engine.headers, timeout).await
}

/// [`send`] with the headers given (a control request made where no `Prepared` is at hand).
pub(crate) async fn send_with(
    clock: Clock,
    url: &str,
    body: Option<&[u8]>,
    headers: &[inferbench_client::ConfiguredHeader],
    timeout: Duration,
) -> Result<Answer, String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("invalid URL {url:?}: {e}"))?;
    let target = Target::from_uri(&uri);
    let exchange = async {
        let Conn { mut sender, io, .. } = connect(&target, clock).await?;
        tokio::spawn(async move {
            let _ = io.await;
        });
        let method = if body.is_some() {
            http::Method::POST
        } else {
            http::Method::GET
        };
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(target.path.clone())
            .header(http::header::HOST, target.host_header.clone())
            .header(
                http::header::USER_AGENT,
                inferbench_client::headers::USER_AGENT,
            );
        if body.is_some() {
            req = req.header(http::header::CONTENT_TYPE, "application/json");
        }
        for h in headers {
            req = req.header(h.name(), h.value());
        }
        let data = match body {
            Some(b) => TimedBody::new(
                Bytes::copy_from_slice(b),
                clock,
                std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
            ),
            None => TimedBody::empty(clock),
        };
        let req = req.body(data).map_err(|e| e.to_string())?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| inferbench_client::transport::error_chain(&e))?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Answer { status, body })
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {:.1} s", timeout.as_secs_f64())),
    }
}

/// `scheme://host[:port]` of a URL (control routes are relative to the origin, as in AIPerf).
pub(crate) fn origin(url: &str) -> Result<String, Failure> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| Failure::input(format!("--url {url:?}: {e}")))?;
    let scheme = uri.scheme_str().unwrap_or("http");
    let authority = uri
        .authority()
        .ok_or_else(|| Failure::input(format!("--url {url:?}: no host")))?;
    Ok(format!("{scheme}://{authority}"))
}

/// The unique origins of the plan's URLs, in order (AIPerf's control hooks, the reset and
/// the server profiler, go to each).
pub(crate) fn origins(plan: &inferbench_core::plan::RunPlan) -> Result<Vec<String>, Failure> {
    let mut out: Vec<String> = Vec::new();
    for u in plan.routing.urls_or(&plan.url) {
        let o = origin(u)?;
        if !out.contains(&o) {
            out.push(o);
        }
    }
    Ok(out)
}

/// The canned one-token request of the run's endpoint type: the shortest answer that shows
/// the model generates. Endpoint types without a generation limit send their first frozen
/// request as it is (it is what the run will send anyway).
pub fn probe_body(p: &Prepared, model: &str) -> Option<Vec<u8>> {
    let plan = &p.plan;
    let hi = "Hi";
    let body = match plan.endpoint_type {
        EndpointType::Chat => {
            let limit = if plan.use_legacy_max_tokens {
                "max_tokens"
            } else {
                "max_completion_tokens"
            };
            let mut b = json!({"model": model, "messages": [{"role": "user", "content": hi}], "stream": false});
            b[limit] = json!(1);
            b
        }
        EndpointType::Completions => {
            json!({"model": model, "prompt": hi, "max_tokens": 1, "stream": false})
        }
        EndpointType::Responses => {
            json!({"model": model, "input": hi, "max_output_tokens": 16, "stream": false})
        }
        EndpointType::Messages => {
            json!({"model": model, "messages": [{"role": "user", "content": hi}], "max_tokens": 1, "stream": false})
        }
        _ => {
            return p
                .workload
                .payloads
                .first()
                .map(|w| w.body.clone().into_bytes());
        }
    };
    Some(body.to_string().into_bytes())
}

/// The run's models a `/v1/models` answer does not list (all of them when the answer is
/// not a model list).
fn unlisted<'m>(body: &[u8], models: &'m [String]) -> Vec<&'m str> {
    let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    let ids: Vec<&str> = v
        .get("data")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|m| m.get("id")?.as_str()).collect())
        .unwrap_or_default();
    models
        .iter()
        .map(String::as_str)
        .filter(|m| !ids.contains(m))
        .collect()
}

/// One readiness check of one URL: `Ok(())` when ready, `Err(what was seen)` otherwise. As
/// AIPerf checks a URL: the models mode asks its `/v1/models` for every model, the inference
/// mode sends each model its one-token request (endpoint types whose probe is the first
/// frozen request send it once).
async fn check_url(
    clock: Clock,
    p: &Prepared,
    base: &str,
    mode: WaitMode,
    timeout: Duration,
) -> Result<(), String> {
    let base = base.trim_end_matches('/');
    if matches!(mode, WaitMode::Models | WaitMode::Both) {
        let url = format!("{base}/v1/models");
        let a = send(clock, &url, None, p, timeout)
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if a.status == 404 {
            // The server has no models route: any 2xx on the base URL will do (AIPerf's
            // fallback).
            let b = send(clock, base, None, p, timeout)
                .await
                .map_err(|e| format!("GET {base}: {e}"))?;
            if !(200..300).contains(&b.status) {
                return Err(format!("GET {url}: 404, GET {base}: {}", b.status));
            }
        } else if !(200..300).contains(&a.status) {
            return Err(format!("GET {url}: {}", a.status));
        } else {
            let missing = unlisted(&a.body, &p.plan.models);
            if !missing.is_empty() || p.plan.models.is_empty() {
                return Err(format!("GET {url}: {} not listed", missing.join(", ")));
            }
        }
    }
    if matches!(mode, WaitMode::Inference | WaitMode::Both) {
        let url = inferbench_core::endpoint_url::join(base, &p.plan.endpoint_path);
        let mut bodies: Vec<Vec<u8>> = Vec::new();
        for m in p.plan.models.iter().map(String::as_str).chain(
            // No model named: one probe, as before.
            p.plan.models.is_empty().then_some(""),
        ) {
            let b = probe_body(p, m).unwrap_or_default();
            if !bodies.contains(&b) {
                bodies.push(b);
            }
        }
        for body in &bodies {
            let a = send(clock, &url, Some(body), p, timeout)
                .await
                .map_err(|e| format!("POST {url}: {e}"))?;
            if !(200..300).contains(&a.status) {
                return Err(format!("POST {url}: {}", a.status));
            }
        }
    }
    Ok(())
}

/// `--wait-for-model-timeout`: probe every `--wait-for-model-interval` seconds until the
/// server is ready; not ready in time is a run failure (exit 1, as for an unreachable
/// server) whose line names the URL, the mode, the attempts and the last answer.
pub async fn wait_for_model(p: &Prepared) -> Result<(), Failure> {
    let c = &p.plan.controls;
    if c.wait_for_model_timeout_s <= 0.0 {
        return Ok(());
    }
    let clock = Clock::start();
    // Every URL in turn, each with the whole timeout, as AIPerf waits for them.
    for base in p.plan.routing.urls_or(&p.plan.url) {
        wait_for_url(clock, p, base).await?;
    }
    Ok(())
}

async fn wait_for_url(clock: Clock, p: &Prepared, base: &str) -> Result<(), Failure> {
    let c = &p.plan.controls;
    let limit = Duration::from_secs_f64(c.wait_for_model_timeout_s);
    let interval = Duration::from_secs_f64(c.wait_for_model_interval_s);
    let start = Instant::now();
    let mut attempts = 0u32;
    loop {
        let left = limit.saturating_sub(start.elapsed());
        attempts += 1;
        // An attempt never outlives the wait (at least 100 ms, so that one can answer).
        let last = match check_url(
            clock,
            p,
            base,
            c.wait_for_model_mode,
            left.max(Duration::from_millis(100)),
        )
        .await
        {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(Failure::run(format!(
                "--wait-for-model-timeout {}: {base} not ready ({} mode, {attempts} attempt{}; last: {last})",
                c.wait_for_model_timeout_s,
                c.wait_for_model_mode.as_str(),
                if attempts == 1 { "" } else { "s" },
            )));
        }
        tokio::time::sleep(interval.min(left)).await;
    }
}

/// AIPerf's transient answers, retried: conflict, locked, too many requests, unavailable.
fn transient(status: u16) -> bool {
    matches!(status, 409 | 423 | 429 | 503)
}

/// `--reset-kv-cache`: `POST {origin}{path}` once at every unique origin of the run's URLs,
/// in order (AIPerf resets each), each with its own retries: a transport error or a
/// transient status is retried with backoff (1 s doubling to 8 s) for up to 60 s; any other
/// non-2xx answer, or the budget spent, fails the run (AIPerf aborts the cell). Empty when
/// the reset is off.
pub async fn reset_kv_cache(p: &Prepared) -> Result<Vec<KvCacheReset>, Failure> {
    let Some(r) = &p.plan.controls.reset_kv_cache else {
        return Ok(Vec::new());
    };
    let mut done = Vec::new();
    for o in origins(&p.plan)? {
        done.push(reset_one(p, format!("{o}{}", r.path), r.timeout_s).await?);
    }
    Ok(done)
}

async fn reset_one(p: &Prepared, url: String, timeout_s: f64) -> Result<KvCacheReset, Failure> {
    let clock = Clock::start();
    let timeout = Duration::from_secs_f64(timeout_s);
    let budget = Duration::from_secs_f64(RESET_RETRY_BUDGET_S);
    let start = Instant::now();
    let mut backoff = Duration::from_secs(1);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let last = match send(clock, &url, Some(b""), p, timeout).await {
            Ok(a) if (200..300).contains(&a.status) => {
                return Ok(KvCacheReset {
                    url,
                    status: Some(a.status),
                    attempts,
                });
            }
            Ok(a) if !transient(a.status) => {
                return Err(Failure::run(format!(
                    "--reset-kv-cache: POST {url} answered {}",
                    a.status
                )));
            }
            Ok(a) => format!("answered {}", a.status),
            Err(e) => e,
        };
        if start.elapsed() + backoff > budget {
            return Err(Failure::run(format!(
                "--reset-kv-cache: POST {url} failed {attempts} times in {:.0} s; last: {last}",
                start.elapsed().as_secs_f64()
            )));
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(8));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_list_must_hold_every_model() {
        let body = br#"{"object":"list","data":[{"id":"a"},{"id":"b"}]}"#;
        let ms = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(unlisted(body, &ms(&["a", "b"])).is_empty());
        assert_eq!(unlisted(body, &ms(&["a", "c", "d"])), ["c", "d"]);
        assert_eq!(unlisted(br#"{"data":[]}"#, &ms(&["a"])), ["a"]);
        assert_eq!(unlisted(b"not json", &ms(&["a", "b"])), ["a", "b"]);
    }

    #[test]
    fn the_origin_drops_the_path() {
        assert_eq!(
            origin("http://127.0.0.1:8000/v1").unwrap(),
            "http://127.0.0.1:8000"
        );
        assert!(origin("http://").is_err());
    }

    #[test]
    fn transient_statuses_are_aiperfs() {
        for s in [409, 423, 429, 503] {
            assert!(transient(s));
        }
        for s in [400, 401, 404, 500] {
            assert!(!transient(s));
        }
    }
}
