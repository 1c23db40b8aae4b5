//! `GET {base}/v1/models`, for the manifest's server identity, on a connection of its own
//! made as the engine makes them, with the run's own configured headers (the API key's
//! `Authorization`, credentials from the URL, every `--header`): a server that needs auth
//! answers it as it answers the requests. Not the per-request ids: the probe is no request
//! of the run.

use std::time::Duration;

use http_body_util::BodyExt;

use crate::clock::Clock;
use crate::headers::{ConfiguredHeader, USER_AGENT};
use crate::transport::{Conn, Target, TimedBody, connect};

/// [`fetch_models_with`] without any configured header.
pub async fn fetch_models(
    clock: Clock,
    base_url: &str,
    timeout: Duration,
) -> Result<Option<serde_json::Value>, String> {
    fetch_models_with(clock, base_url, &[], timeout).await
}

/// The probe. `Ok(None)` when the server answered but not with JSON (or not 2xx); `Err` only
/// when it could not be reached at all, so that an unreachable `--url` fails before the run
/// with one clear line. `headers` go out after `Host` and `User-Agent`, a configured name
/// replacing ours, as on every request.
pub async fn fetch_models_with(
    clock: Clock,
    base_url: &str,
    headers: &[ConfiguredHeader],
    timeout: Duration,
) -> Result<Option<serde_json::Value>, String> {
    let uri: hyper::Uri = format!("{}/v1/models", base_url.trim_end_matches('/'))
        .parse()
        .map_err(|e| format!("invalid URL {base_url:?}: {e}"))?;
    let target = Target::from_uri(&uri);
    let probe = async {
        let Conn { mut sender, io, .. } = connect(&target, clock).await?;
        // The probe's connection is driven by its own task; it ends with the sender.
        tokio::spawn(async move {
            let _ = io.await;
        });
        let mut req = hyper::Request::get(target.path.clone())
            .header(http::header::HOST, target.host_header.clone())
            .header(http::header::USER_AGENT, USER_AGENT)
            .body(TimedBody::empty(clock))
            .map_err(|e| e.to_string())?;
        for h in headers {
            let (name, value) = h.wire();
            req.headers_mut().insert(name.clone(), value.clone());
        }
        // Reached, but no usable answer: not an error, just no identity to record.
        let Ok(resp) = sender.send_request(req).await else {
            return Ok(None);
        };
        if !resp.status().is_success() {
            return Ok(None);
        }
        Ok(match resp.into_body().collect().await {
            Ok(b) => serde_json::from_slice(&b.to_bytes()).ok(),
            Err(_) => None,
        })
    };
    match tokio::time::timeout(timeout, probe).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer from {base_url} within {timeout:?}")),
    }
}
