//! The mapping itself: each part of an AIPerf config taken by name and turned into flags;
//! whatever is left in a table when it is done is refused, naming it. Where AIPerf's YAML
//! default differs from the CLI's (streaming off, `sequential` sampling, fixed-schedule
//! auto-offset on), the flag is written out so the run does what AIPerf would do.

use std::path::Path;

use serde_json::{Map, Value};

use super::part::{Part, fmt_num};

/// The reason a flag is refused (cli/unbuilt.rs), for the YAML key that gives it.
fn refusal(flag: &str) -> &'static str {
    crate::cli::refusal(flag).unwrap_or("refused")
}
use super::{dataset, outputs};

/// The flags of a whole config; `benchmark` is the (scenario-merged) benchmark table;
/// `cli` is `profile --config`, where `multiRun`, `benchmark.artifacts` and the telemetry
/// map to flags (a plan has its own `repeats`, `output` and telemetry, so there they stay
/// refused).
pub fn flags_for(
    file: &str,
    doc: &Map<String, Value>,
    benchmark: &Map<String, Value>,
    base: &Path,
    simulated: bool,
    cli: bool,
) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut root = Part::new(file, "", &Value::Object(doc.clone()))?;
    if let Some(v) = root.string("schemaVersion")?
        && v != "2.0"
    {
        return Err(root.err(
            "schemaVersion",
            format!("\"{v}\": AIPerf 0.13's format is \"2.0\""),
        ));
    }
    // Already resolved into `benchmark` (mod.rs): the base and the selected scenario.
    root.take("benchmark");
    root.take("sweep");
    if let Some(seed) = root.uint("randomSeed")? {
        out.extend(["--random-seed".into(), seed.to_string()]);
    }
    if cli && let Some(m) = root.take("multiRun") {
        outputs::multi_run(file, &m, &mut out)?;
    }
    // Read by the Jinja substitution (jinja.rs) and the user files (hooks.rs).
    root.take("variables");
    if root.boolean("noSweepTable")? == Some(true) {
        out.push("--no-sweep-table".into());
    }
    // Drawn by the run hooks (hooks.rs, config_hooks.rs); its `settings` tune AIPerf's own
    // server-metric plots, which inferbench does not draw from a spec.
    if let Some(p) = root.take("plot")
        && let Some(s) = p
            .get("settings")
            .filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))
    {
        out.extend([
            "--config-note".into(),
            format!(
                "{file}: plot.settings: not used (AIPerf's downsampling of its server-metric plots; inferbench draws every scrape): {}",
                s
            ),
        ]);
    }
    root.done()?;
    let mut b = Part::new(file, "benchmark", &Value::Object(benchmark.clone()))?;
    models(&mut b, &mut out)?;
    if let Some(e) = b.take("endpoint") {
        endpoint(file, &e, simulated, &mut out)?;
    }
    if let Some(t) = b.take("tokenizer") {
        let mut t = Part::new(file, "benchmark.tokenizer", &t)?;
        if let Some(n) = t.string("name")? {
            out.extend(["--tokenizer".into(), n]);
        }
        if let Some(r) = t.string("revision")? {
            out.extend(["--tokenizer-revision".into(), r]);
        }
        if t.take("applyChatTemplate") == Some(Value::Bool(true)) {
            out.push("--apply-chat-template".into());
        }
        t.done()?;
    }
    let ds = match (b.take("dataset"), b.take("datasets")) {
        (Some(d), None) => Some(("benchmark.dataset".to_string(), d)),
        (None, Some(Value::Array(v))) if v.len() == 1 => {
            Some(("benchmark.datasets[0]".to_string(), v[0].clone()))
        }
        (None, Some(v)) => {
            return Err(format!(
                "{file}: benchmark.datasets: {} datasets: not built in inferbench plans (one dataset per profile)",
                v.as_array().map_or(0, Vec::len)
            ));
        }
        (Some(_), Some(_)) => {
            return Err(format!(
                "{file}: benchmark.datasets: give dataset or datasets, not both"
            ));
        }
        (None, None) => None,
    };
    if let Some((at, d)) = ds {
        dataset::dataset(file, &at, &d, base, &mut out)?;
    }
    phases(&mut b, &mut out)?;
    if cli {
        if let Some(a) = b.take("artifacts") {
            outputs::artifacts(file, &a, &mut out)?;
        }
        if let Some(g) = b.take("gpuTelemetry") {
            outputs::gpu_telemetry(file, &g, simulated, &mut out)?;
        }
        if let Some(s) = b.take("serverMetrics") {
            outputs::server_metrics(file, &s, simulated, &mut out)?;
        }
        if let Some(l) = b.take("logging") {
            let mut l = Part::new(file, "benchmark.logging", &l)?;
            if let Some(level) = l.string("level")? {
                out.extend(["--log-level".into(), level]);
            }
            l.done()?;
        }
        if let Some(r) = b.take("runtime") {
            let mut r = Part::new(file, "benchmark.runtime", &r)?;
            if let Some(s) = r.num("statsInterval")? {
                out.extend(["--stats-interval".into(), fmt_num(s)]);
            }
            if let Some(u) = r.string("ui")? {
                out.extend(["--ui".into(), u]);
            }
            if let Some(p) = r.take("apiPort") {
                return Err(r.refuse_why("apiPort", &p, refusal("api-port")));
            }
            r.done()?;
        }
    }
    // Refused with the reason of the flags that give them.
    for (k, flag) in [
        ("otel", "otel-url"),
        ("mlflow", "mlflow-tracking-uri"),
        ("wandb", "wandb-project"),
        ("networkLatency", "network-latency-mean"),
        ("unsafeOverride", "unsafe-override"),
    ] {
        match b.take(k) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(v) if v.get("enabled") == Some(&Value::Bool(false)) => {}
            Some(v) => return Err(b.refuse_why(k, &v, refusal(flag))),
        }
    }
    if let Some(v) = b.take("slos") {
        outputs::slos(file, &v, &mut out)?;
    }
    b.done()?;
    Ok(out)
}

fn models(b: &mut Part<'_>, out: &mut Vec<String>) -> Result<(), String> {
    let mut names: Vec<String> = Vec::new();
    for k in ["model", "models"] {
        match b.take(k) {
            None => {}
            Some(Value::String(s)) => names.push(s),
            Some(Value::Array(v)) => {
                for (i, m) in v.iter().enumerate() {
                    match m {
                        Value::String(s) => names.push(s.clone()),
                        other => return Err(b.refuse(&format!("{k}[{i}]"), other)),
                    }
                }
            }
            Some(other) => return Err(b.refuse(k, &other)),
        }
    }
    if !names.is_empty() {
        out.extend(["--model".into(), names.join(",")]);
    }
    Ok(())
}

fn endpoint(file: &str, e: &Value, simulated: bool, out: &mut Vec<String>) -> Result<(), String> {
    let mut e = Part::new(file, "benchmark.endpoint", e)?;
    let mut urls: Vec<String> = Vec::new();
    for k in ["url", "urls"] {
        match e.take(k) {
            None => {}
            Some(Value::String(u)) => urls.push(u),
            Some(Value::Array(v)) => {
                for (i, u) in v.iter().enumerate() {
                    match u.as_str() {
                        Some(u) => urls.push(u.to_string()),
                        None => return Err(e.refuse(&format!("{k}[{i}]"), u)),
                    }
                }
            }
            Some(other) => return Err(e.refuse(k, &other)),
        }
    }
    let mut path = e.string("path")?;
    let strategy = e.string("urlStrategy")?;
    if !simulated {
        // Each URL may carry the endpoint's path (AIPerf's templates do): one path for all.
        let mut url_path: Option<String> = None;
        for u in &urls {
            // AIPerf prepends http:// to a URL without a scheme.
            let u = if u.contains("://") {
                u.clone()
            } else {
                format!("http://{u}")
            };
            let (base, p) = split_url(&u);
            if url_path.is_some() && p != url_path {
                return Err(e.err(
                    "urls",
                    "the URLs carry different paths: inferbench sends one endpoint path to every URL (give it as endpoint.path)",
                ));
            }
            url_path = p;
            out.extend(["--url".into(), base]);
        }
        if let Some(p) = url_path {
            if path.is_some() {
                return Err(e.err("path", "given both in url and path: give one"));
            }
            path = Some(p);
        }
        if let Some(s) = strategy {
            out.extend(["--url-strategy".into(), s]);
        }
    }
    if let Some(t) = e.string("type")? {
        out.extend(["--endpoint-type".into(), t]);
    }
    if let Some(p) = path {
        out.extend(["--custom-endpoint".into(), p]);
    }
    if let Some(k) = e.string("apiKey")? {
        out.extend(["--api-key".into(), k]);
    }
    if let Some(t) = e.num("timeout")? {
        out.extend(["--request-timeout-seconds".into(), fmt_num(t)]);
    }
    // AIPerf's YAML default is not streaming.
    out.push(if e.boolean("streaming")?.unwrap_or(false) {
        "--streaming".into()
    } else {
        "--no-streaming".into()
    });
    for (k, flag) in [
        ("useLegacyMaxTokens", "--use-legacy-max-tokens"),
        ("useServerTokenCount", "--use-server-token-count"),
        ("perChunkUsage", "--per-chunk-usage"),
    ] {
        if e.boolean(k)? == Some(true) {
            out.push(flag.into());
        }
    }
    if let Some(c) = e.string("connectionReuse")? {
        out.extend(["--connection-reuse-strategy".into(), c]);
    }
    if let Some(h) = e.string("sessionHeader")? {
        out.extend(["--session-header".into(), h]);
    }
    if let Some(t) = e.string("transport")?
        && t != "http"
    {
        return Err(e.refuse("transport", &Value::String(t)));
    }
    if let Some(t) = e.num("waitForModelTimeout")? {
        out.extend(["--wait-for-model-timeout".into(), fmt_num(t)]);
    }
    if let Some(t) = e.num("waitForModelInterval")? {
        out.extend(["--wait-for-model-interval".into(), fmt_num(t)]);
    }
    if let Some(m) = e.string("waitForModelMode")? {
        out.extend(["--wait-for-model-mode".into(), m]);
    }
    match e.take("serverProfiler") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => out.push("--server-profiler".into()),
        Some(v @ Value::Object(_)) => {
            let mut r = Part::new(file, &e.path("serverProfiler"), &v)?;
            out.push("--server-profiler".into());
            if let Some(t) = r.num("timeoutSeconds")? {
                out.extend(["--server-profiler-timeout-seconds".into(), fmt_num(t)]);
            }
            for (k, flag) in [
                ("startPath", "--server-profiler-start-path"),
                ("stopPath", "--server-profiler-stop-path"),
            ] {
                if let Some(p) = r.string(k)? {
                    out.extend([flag.into(), p]);
                }
            }
            r.done()?;
        }
        Some(other) => return Err(e.refuse("serverProfiler", &other)),
    }
    match e.take("requestContentType") {
        None | Some(Value::Null) => {}
        Some(Value::String(c)) if c.eq_ignore_ascii_case("application/json") => {}
        Some(v) => return Err(e.refuse("requestContentType", &v)),
    }
    for (k, flag) in [
        ("downloadVideoContent", "download-video-content"),
        ("uuidAndStrip", "uuid-and-strip"),
    ] {
        match e.take(k) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(v) => return Err(e.refuse_why(k, &v, refusal(flag))),
        }
    }
    match e.take("resetKvCache") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => out.push("--reset-kv-cache".into()),
        Some(v @ Value::Object(_)) => {
            let mut r = Part::new(file, &e.path("resetKvCache"), &v)?;
            out.push("--reset-kv-cache".into());
            if let Some(t) = r.num("timeoutSeconds")? {
                out.extend(["--reset-kv-cache-timeout-seconds".into(), fmt_num(t)]);
            }
            if let Some(p) = r.string("path")? {
                out.extend(["--reset-kv-cache-path".into(), p]);
            }
            r.done()?;
        }
        Some(other) => return Err(e.refuse("resetKvCache", &other)),
    }
    if let Some(h) = e.take("headers") {
        let Value::Object(h) = h else {
            return Err(e.refuse("headers", &h));
        };
        for (k, v) in h {
            let v = v.as_str().unwrap_or_default();
            out.extend(["--header".into(), format!("{k}:{v}")]);
        }
    }
    if let Some(x) = e.take("extra") {
        if !x.is_object() {
            return Err(e.refuse("extra", &x));
        }
        out.extend(["--extra-inputs".into(), x.to_string()]);
    }
    e.done()
}

/// `http://h:8000/v1/chat/completions` → (`http://h:8000`, Some(`/v1/chat/completions`)).
fn split_url(u: &str) -> (String, Option<String>) {
    let after_scheme = u.find("://").map_or(0, |i| i + 3);
    match u[after_scheme..].find('/') {
        Some(i) => {
            let cut = after_scheme + i;
            let path = &u[cut..];
            let path = (path != "/").then(|| path.to_string());
            (u[..cut].to_string(), path)
        }
        None => (u.to_string(), None),
    }
}

/// `phases` (a list or the one-phase shorthand), `warmup` and `profiling`: at most one
/// warmup phase (`excludeFromResults: true`, or named `warmup`) and one profiling phase.
fn phases(b: &mut Part<'_>, out: &mut Vec<String>) -> Result<(), String> {
    let mut list: Vec<(String, Value)> = Vec::new();
    match b.take("phases") {
        None => {}
        Some(Value::Array(v)) => {
            for (i, p) in v.into_iter().enumerate() {
                list.push((format!("benchmark.phases[{i}]"), p));
            }
        }
        Some(p) => list.push(("benchmark.phases".into(), p)),
    }
    let mut warmup = b
        .take("warmup")
        .map(|w| ("benchmark.warmup".to_string(), w));
    let mut profiling = b
        .take("profiling")
        .map(|p| ("benchmark.profiling".to_string(), p));
    for (at, p) in list {
        let is_warmup = p.get("excludeFromResults").and_then(Value::as_bool) == Some(true)
            || p.get("kind").and_then(Value::as_str) == Some("warmup")
            || p.get("name").and_then(Value::as_str) == Some("warmup");
        let slot = if is_warmup {
            &mut warmup
        } else {
            &mut profiling
        };
        if let Some((first, _)) = slot {
            return Err(format!(
                "{}: {at}: a second {} phase (after {first}): not built in inferbench plans",
                b.file,
                if is_warmup { "warmup" } else { "profiling" }
            ));
        }
        *slot = Some((at, p));
    }
    if let Some((at, p)) = profiling {
        profiling_phase(b.file, &at, &p, out)?;
    }
    if let Some((at, p)) = warmup {
        warmup_phase(b.file, &at, &p, out)?;
    }
    Ok(())
}

fn profiling_phase(file: &str, at: &str, p: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut p = Part::new(file, at, p)?;
    p.take("name");
    p.take("kind");
    common_phase_parts(&mut p)?;
    if p.boolean("excludeFromResults")? == Some(true) {
        return Err(p.err(
            "excludeFromResults",
            "the profiling phase is the one measured",
        ));
    }
    let ty = p.string("type")?.unwrap_or_default();
    match ty.as_str() {
        "concurrency" => {}
        "poisson" | "gamma" | "constant" => {
            match (p.num("rate")?, p.take("rateSeries")) {
                (Some(_), Some(_)) => {
                    return Err(p.err("rateSeries", "rate and rateSeries are mutually exclusive"));
                }
                (Some(rate), None) => out.extend(["--request-rate".into(), fmt_num(rate)]),
                (None, Some(v)) => match v.get("path").and_then(Value::as_str) {
                    Some(path) => out.extend(["--request-rate-series".into(), path.into()]),
                    // Inline points would need a file for the flag; the path form maps.
                    None => {
                        return Err(p.err(
                            "rateSeries.points",
                            "inline points are not built: write them to a JSON file and give rateSeries.path",
                        ));
                    }
                },
                (None, None) => return Err(p.err("rate", "missing (or rateSeries)")),
            }
            out.extend(["--arrival-pattern".into(), ty.clone()]);
            if ty == "gamma"
                && let Some(s) = p.num("smoothness")?
            {
                out.extend(["--arrival-smoothness".into(), fmt_num(s)]);
            }
            if let Some(r) = p.seconds("rateRamp")? {
                out.extend(["--request-rate-ramp-duration".into(), fmt_num(r)]);
            }
        }
        "user_centric" => {
            let rate = p.num("rate")?.ok_or_else(|| p.err("rate", "missing"))?;
            let users = p.uint("users")?.ok_or_else(|| p.err("users", "missing"))?;
            out.extend(["--user-centric-rate".into(), fmt_num(rate)]);
            out.extend(["--num-users".into(), users.to_string()]);
        }
        "fixed_schedule" => {
            out.push("--fixed-schedule".into());
            // AIPerf's YAML default: the first timestamp is t = 0.
            if p.boolean("autoOffset")?.unwrap_or(true) {
                out.push("--fixed-schedule-auto-offset".into());
            }
            if let Some(s) = p.uint("startOffset")? {
                out.extend(["--fixed-schedule-start-offset".into(), s.to_string()]);
            }
            if let Some(s) = p.uint("endOffset")? {
                out.extend(["--fixed-schedule-end-offset".into(), s.to_string()]);
            }
        }
        other => return Err(p.refuse("type", &Value::String(other.into()))),
    }
    if let Some(c) = p.uint("concurrency")? {
        out.extend(["--concurrency".into(), c.to_string()]);
    }
    if let Some(n) = p.uint("requests")? {
        out.extend(["--request-count".into(), n.to_string()]);
    }
    if let Some(d) = p.seconds("duration")? {
        out.extend(["--benchmark-duration".into(), fmt_num(d)]);
    }
    if let Some(g) = p.seconds("gracePeriod")? {
        out.extend(["--benchmark-grace-period".into(), fmt_num(g)]);
    }
    let prefill_cap = p.uint("prefillConcurrency")?;
    if let Some(c) = prefill_cap {
        out.extend(["--prefill-concurrency".into(), c.to_string()]);
    }
    if let Some(r) = p.seconds("concurrencyRamp")? {
        out.extend(["--concurrency-ramp-duration".into(), fmt_num(r)]);
    }
    if let Some(r) = p.seconds("prefillRamp")? {
        // AIPerf runs such a phase and skips the ramp in silence; here it runs too, and the
        // note says the ramp does nothing (the flag alone is refused: docs/aiperf-config.md).
        if prefill_cap.is_none() {
            out.extend([
                "--config-note".into(),
                p.err(
                    "prefillRamp",
                    format!(
                        "{} s without prefillConcurrency in the phase has no effect (the ramp opens the prefill cap, and there is none to open; AIPerf ignores it too)",
                        fmt_num(r)
                    ),
                ),
            ]);
        } else {
            out.extend(["--prefill-concurrency-ramp-duration".into(), fmt_num(r)]);
        }
    }
    if let Some(t) = p.num("failedRequestThreshold")? {
        out.extend(["--failed-request-threshold".into(), fmt_num(t)]);
    }
    if let Some(c) = p.take("cancellation") {
        let mut c = Part::new(file, &p.path("cancellation"), &c)?;
        let rate = c.num("rate")?.ok_or_else(|| c.err("rate", "missing"))?;
        out.extend(["--request-cancellation-rate".into(), fmt_num(rate)]);
        if let Some(d) = c.seconds("delay")? {
            out.extend(["--request-cancellation-delay".into(), fmt_num(d)]);
        }
        c.done()?;
    }
    if let Some(n) = p.uint("sessions")? {
        out.extend(["--num-profiling-sessions".into(), n.to_string()]);
    }
    p.done()
}

/// Keys every phase may have that change nothing at their defaults.
fn common_phase_parts(p: &mut Part<'_>) -> Result<(), String> {
    super::replay::phase_keys(p)?;
    if let Some(s) = p.take("seamless")
        && s != Value::Bool(false)
    {
        return Err(p.refuse_why(
            "seamless",
            &s,
            "a phase starts after the previous one's requests finish",
        ));
    }
    Ok(())
}

/// The warmup phase: by count, time or sessions (`--num-warmup-sessions`), at a
/// concurrency or a rate.
fn warmup_phase(file: &str, at: &str, p: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut p = Part::new(file, at, p)?;
    p.take("name");
    p.take("kind");
    p.take("excludeFromResults");
    common_phase_parts(&mut p)?;
    let ty = p.string("type")?.unwrap_or_default();
    match ty.as_str() {
        "concurrency" => {}
        "user_centric" => {
            let rate = p.num("rate")?.ok_or_else(|| p.err("rate", "missing"))?;
            let users = p.uint("users")?.ok_or_else(|| p.err("users", "missing"))?;
            out.extend(["--warmup-user-centric-rate".into(), fmt_num(rate)]);
            out.extend(["--warmup-num-users".into(), users.to_string()]);
        }
        "poisson" | "gamma" | "constant" => {
            let rate = p.num("rate")?.ok_or_else(|| p.err("rate", "missing"))?;
            out.extend(["--warmup-request-rate".into(), fmt_num(rate)]);
            out.extend(["--warmup-arrival-pattern".into(), ty.clone()]);
            if let Some(r) = p.seconds("rateRamp")? {
                out.extend(["--warmup-request-rate-ramp-duration".into(), fmt_num(r)]);
            }
            if ty == "gamma"
                && let Some(s) = p.take("smoothness")
            {
                return Err(p.refuse_why(
                    "smoothness",
                    &s,
                    "the warmup's gamma shape has no flag of its own (--arrival-smoothness is the profiling phase's)",
                ));
            }
        }
        other => {
            return Err(p.refuse_why(
                "type",
                &Value::String(other.into()),
                "a warmup phase runs at a concurrency, a request rate or user-centric",
            ));
        }
    }
    if let Some(n) = p.uint("requests")? {
        out.extend(["--warmup-request-count".into(), n.to_string()]);
    }
    if let Some(n) = p.uint("sessions")? {
        out.extend(["--num-warmup-sessions".into(), n.to_string()]);
    }
    if let Some(c) = p.uint("concurrency")? {
        out.extend(["--warmup-concurrency".into(), c.to_string()]);
    }
    if let Some(d) = p.seconds("duration")? {
        out.extend(["--warmup-duration".into(), fmt_num(d)]);
    }
    if let Some(g) = p.seconds("gracePeriod")? {
        out.extend(["--warmup-grace-period".into(), fmt_num(g)]);
    }
    if let Some(c) = p.uint("prefillConcurrency")? {
        out.extend(["--warmup-prefill-concurrency".into(), c.to_string()]);
    }
    if let Some(r) = p.seconds("concurrencyRamp")? {
        out.extend(["--warmup-concurrency-ramp-duration".into(), fmt_num(r)]);
    }
    if let Some(r) = p.seconds("prefillRamp")? {
        out.extend([
            "--warmup-prefill-concurrency-ramp-duration".into(),
            fmt_num(r),
        ]);
    }
    p.done()
}
