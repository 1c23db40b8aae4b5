//! What a run collects and writes: `artifacts`, `gpuTelemetry`, `serverMetrics`, `multiRun`
//! and `slos`.

use serde_json::Value;

use super::part::{Part, fmt_num, shown};
use super::{join, refused};

/// `artifacts`: the directory and export prefix, the raw and HTTP-trace exports, timeslices.
/// `summary` and `records` are accepted when they name files inferbench writes anyway (it
/// writes them all). `userFiles` and `autoPlot`/`plotRequired` are carried out by
/// `profile` itself after each run (see [`super::hooks`]), so they are checked here and
/// map to no flag.
pub(super) fn artifacts(file: &str, a: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut a = Part::new(file, "benchmark.artifacts", a)?;
    if let Some(d) = a.string("dir")? {
        out.extend(["--artifact-dir".into(), d]);
    }
    if let Some(p) = a.string("prefix")? {
        out.extend(["--profile-export-prefix".into(), p]);
    }
    for (k, written) in [
        ("summary", &["json", "csv"][..]),
        ("records", &["jsonl"][..]),
    ] {
        let Some(v) = a.take(k) else { continue };
        let items: Vec<Value> = match &v {
            Value::Array(x) => x.clone(),
            Value::Bool(true) => Vec::new(),
            other => vec![other.clone()],
        };
        for (i, x) in items.iter().enumerate() {
            if !x.as_str().is_some_and(|s| written.contains(&s)) {
                return Err(a.refuse(&format!("{k}[{i}]"), x));
            }
        }
    }
    if let Some(s) = a.seconds("sliceDuration")? {
        out.extend(["--slice-duration".into(), fmt_num(s)]);
    }
    if a.boolean("raw")? == Some(true) {
        out.extend(["--export-level".into(), "raw".into()]);
    }
    if a.boolean("trace")? == Some(true) {
        out.push("--export-http-trace".into());
    }
    if a.boolean("exportOutputsJson")? == Some(true) {
        out.push("--export-outputs-json".into());
    }
    if a.boolean("showTraceTiming")? == Some(true) {
        out.push("--show-trace-timing".into());
    }
    // Carried out by `profile` itself (hooks.rs): checked here, no flag.
    for k in ["userFiles", "user_files"] {
        if let Some(v) = a.take(k) {
            super::hooks::user_files(file, &v)?;
        }
    }
    a.take("autoPlot");
    a.take("plotRequired");
    a.done()
}

/// `gpuTelemetry` (a URL, or a table): `enabled: false` → `--no-gpu-telemetry`; its URLs →
/// `--gpu-telemetry URL…` (without URLs, AIPerf's default exporters are tried, as without
/// the flag). A local collector (`pynvml`, `amdsmi`) or the dashboard mode becomes the
/// `--gpu-telemetry` value that names it, which is refused by that flag's name. With
/// `simulated`, the file's URLs (its deployment's exporters) are left out: the simulated
/// server's own exporter is scraped.
pub(super) fn gpu_telemetry(
    file: &str,
    v: &Value,
    simulated: bool,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let at = "benchmark.gpuTelemetry";
    let table = match v {
        Value::String(u) => serde_json::json!({ "urls": [u] }),
        other => other.clone(),
    };
    let mut g = Part::new(file, at, &table)?;
    if g.boolean("enabled")? == Some(false) {
        out.push("--no-gpu-telemetry".into());
        return Ok(());
    }
    let mut urls = urls_of(&mut g)?;
    if simulated {
        urls.clear();
    }
    match g.string("collector")?.as_deref() {
        None | Some("dcgm") => {}
        Some(local) => urls = vec![local.to_string()],
    }
    match g.string("mode")?.as_deref() {
        None | Some("summary") => {}
        Some("realtime_dashboard") => urls.push("dashboard".into()),
        Some(m) => return Err(g.refuse("mode", &Value::String(m.into()))),
    }
    if let Some(f) = g.take("metricsFile") {
        return Err(g.refuse_why(
            "metricsFile",
            &f,
            "replaying GPU metrics from a CSV file is not built; give the DCGM exporter's URL",
        ));
    }
    g.done()?;
    if !urls.is_empty() {
        out.push("--gpu-telemetry".into());
        out.extend(urls);
    }
    Ok(())
}

/// `serverMetrics` (a URL, or a table): `enabled: false` → `--no-server-metrics`; its URLs
/// → `--server-metrics URL…` (scraped besides the endpoint's own `/metrics`, as in
/// AIPerf); `formats` → `--server-metrics-formats` (parquet, which that flag refuses, is
/// left out with a note). With `simulated`, the file's URLs are left out.
pub(super) fn server_metrics(
    file: &str,
    v: &Value,
    simulated: bool,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let at = "benchmark.serverMetrics";
    let table = match v {
        Value::String(u) => serde_json::json!({ "urls": [u] }),
        other => other.clone(),
    };
    let mut s = Part::new(file, at, &table)?;
    if s.boolean("enabled")? == Some(false) {
        out.push("--no-server-metrics".into());
        return Ok(());
    }
    let urls = urls_of(&mut s)?;
    if !urls.is_empty() && !simulated {
        out.push("--server-metrics".into());
        out.extend(urls);
    }
    if let Some(f) = s.take("formats") {
        let list: Vec<String> = f
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        // AIPerf's parquet export is not built: the file's run goes on without it, saying so
        // (the flag itself refuses it), so `config validate` and `profile` agree.
        let (kept, dropped): (Vec<String>, Vec<String>) = list
            .into_iter()
            .partition(|f| !f.eq_ignore_ascii_case("parquet"));
        if !dropped.is_empty() {
            out.extend([
                "--config-note".into(),
                s.err(
                    "formats",
                    format!(
                        "{}: not written (not built in inferbench: no Parquet writer; every raw scrape is kept in inferbench_scrapes.jsonl)",
                        dropped.join(", ")
                    ),
                ),
            ]);
        }
        if !kept.is_empty() {
            out.extend(["--server-metrics-formats".into(), kept.join(",")]);
        }
    }
    if let Some(d) = s.take("discovery") {
        let mode = d.get("mode").and_then(Value::as_str);
        if mode != Some("disabled") {
            return Err(s.refuse_why(
                "discovery",
                &d,
                "Kubernetes discovery of metrics endpoints is not built; list the URLs, or set mode: disabled",
            ));
        }
    }
    s.done()
}

/// `urls` and its singular alias `url` (a string or a list).
fn urls_of(p: &mut Part<'_>) -> Result<Vec<String>, String> {
    let mut urls = Vec::new();
    for k in ["urls", "url"] {
        match p.take(k) {
            None => {}
            Some(Value::String(u)) => urls.push(u),
            Some(Value::Array(v)) => {
                for (i, u) in v.iter().enumerate() {
                    match u.as_str() {
                        Some(u) => urls.push(u.to_string()),
                        None => return Err(p.refuse(&format!("{k}[{i}]"), u)),
                    }
                }
            }
            Some(other) => return Err(p.refuse(k, &other)),
        }
    }
    Ok(urls)
}

/// `multiRun`: repeats, cool-down, confidence level, warmup-after-first, the seed policies
/// and convergence stopping map to their flags.
pub(super) fn multi_run(file: &str, m: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut m = Part::new(file, "multiRun", m)?;
    if let Some(n) = m.uint("numRuns")? {
        out.extend(["--num-profile-runs".into(), n.to_string()]);
    }
    if let Some(c) = m.num("cooldownSeconds")? {
        out.extend(["--profile-run-cooldown-seconds".into(), fmt_num(c)]);
    }
    if let Some(c) = m.num("confidenceLevel")? {
        out.extend(["--confidence-level".into(), fmt_num(c)]);
    }
    if let Some(d) = m.boolean("disableWarmupAfterFirst")? {
        out.extend([
            "--profile-run-disable-warmup-after-first".into(),
            d.to_string(),
        ]);
    }
    if let Some(c) = m.boolean("setConsistentSeed")? {
        out.extend(["--set-consistent-seed".into(), c.to_string()]);
    }
    if m.boolean("varySeedPerTrial")? == Some(true) {
        out.push("--vary-seed-per-trial".into());
    }
    if let Some(c) = m.take("convergence") {
        convergence(file, &c, out)?;
    }
    m.done()
}

/// `multiRun.convergence` → `--convergence-metric/-stat/-mode/-threshold` (docs/
/// repeated-runs.md). inferbench checks from the second run on, AIPerf's default
/// `minRuns: 2`; another `minRuns` has no flag.
fn convergence(file: &str, c: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut c = Part::new(file, "multiRun.convergence", c)?;
    let metric = c
        .string("metric")?
        .ok_or_else(|| c.err("metric", "missing"))?;
    out.extend(["--convergence-metric".into(), metric]);
    if let Some(s) = c.string("stat")? {
        out.extend(["--convergence-stat".into(), s]);
    }
    if let Some(m) = c.string("mode")? {
        out.extend(["--convergence-mode".into(), m]);
    }
    if let Some(t) = c.num("threshold")? {
        out.extend(["--convergence-threshold".into(), fmt_num(t)]);
    }
    if let Some(v) = c.take("minRuns")
        && v.as_u64() != Some(2)
    {
        return Err(c.refuse_why(
            "minRuns",
            &v,
            "inferbench checks convergence from the second run on (AIPerf's default, 2); another minimum has no flag",
        ));
    }
    c.done()
}

/// `slos: {metric: bound}` → `--goodput "metric:bound …"` (AIPerf's SLO syntax, display
/// units; the metric names are checked when the flag is parsed).
pub(super) fn slos(file: &str, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let Value::Object(m) = v else {
        return Err(refused(file, "benchmark.slos", v));
    };
    let mut items = Vec::new();
    for (k, x) in m {
        let Some(n) = x.as_f64() else {
            return Err(format!(
                "{file}: {}{}: expected a number",
                join("benchmark.slos", k),
                shown(x)
            ));
        };
        items.push(format!("{k}:{}", fmt_num(n)));
    }
    if !items.is_empty() {
        out.extend(["--goodput".into(), items.join(" ")]);
    }
    Ok(())
}
