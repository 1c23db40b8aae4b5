//! `--request-rate-series` and the prefill-concurrency ramps, checked for the plan.

use inferbench_core::rate_series::RateSeries;

use super::ProfileArgs;

/// The series file, read and validated; errors name the flag and the file.
pub fn rate_series(a: &ProfileArgs) -> Result<Option<RateSeries>, String> {
    let Some(path) = &a.aiperf.request_rate_series else {
        return Ok(None);
    };
    if !a.request_rate.is_empty() {
        return Err(
            "--request-rate-series and --request-rate both set the rate: give one (the series' first point is its starting rate)"
                .into(),
        );
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--request-rate-series {path}: cannot read: {e}"))?;
    RateSeries::parse_json(&text)
        .map(Some)
        .map_err(|e| format!("--request-rate-series {path}: {e}"))
}

/// (profiling, warmup) prefill ramps in seconds; each needs a prefill cap to ramp.
pub fn prefill_ramps(a: &ProfileArgs) -> Result<(Option<f64>, Option<f64>), String> {
    let check = |flag: &str, v: Option<f64>| -> Result<Option<f64>, String> {
        v.map(|x| super::limits::positive_seconds(flag, x).map(|_| x))
            .transpose()
    };
    let ramp = check(
        "--prefill-concurrency-ramp-duration",
        a.aiperf.prefill_concurrency_ramp_duration,
    )?;
    let warmup = check(
        "--warmup-prefill-concurrency-ramp-duration",
        a.aiperf.warmup_prefill_concurrency_ramp_duration,
    )?;
    if ramp.is_some() && a.prefill_concurrency.is_empty() {
        return Err(
            "--prefill-concurrency-ramp-duration needs --prefill-concurrency (the cap that ramps)"
                .into(),
        );
    }
    if warmup.is_some()
        && a.prefill_concurrency.is_empty()
        && a.warmup_prefill_concurrency.is_none()
    {
        return Err("--warmup-prefill-concurrency-ramp-duration needs --warmup-prefill-concurrency or --prefill-concurrency (the cap that ramps)".into());
    }
    Ok((ramp, warmup))
}
