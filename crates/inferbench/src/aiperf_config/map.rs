//! The mapping itself: each part of an AIPerf config taken by name and turned into flags;
//! whatever is left in a table when it is done is refused, naming it. Where AIPerf's YAML
//! default differs from the CLI's (streaming off, `sequential` sampling, fixed-schedule
//! auto-offset on), the flag is written out so the run does what AIPerf would do.

use std::path::Path;

use serde_json::{Map, Value};

use super::{join, refused};

/// One table of the config, consumed key by key.
struct Part<'a> {
    file: &'a str,
    at: String,
    m: Map<String, Value>,
}

impl<'a> Part<'a> {
    fn new(file: &'a str, at: &str, v: &Value) -> Result<Part<'a>, String> {
        match v {
            Value::Object(m) => Ok(Part {
                file,
                at: at.to_string(),
                m: m.clone(),
            }),
            _ => Err(format!("{file}: {at}: expected a table")),
        }
    }

    fn take(&mut self, k: &str) -> Option<Value> {
        // shift_remove: what is left keeps the file's order, so the first refused part is
        // the first in the file.
        self.m.shift_remove(k).filter(|v| !v.is_null())
    }

    fn path(&self, k: &str) -> String {
        join(&self.at, k)
    }

    fn err(&self, k: &str, msg: impl std::fmt::Display) -> String {
        format!("{}: {}: {msg}", self.file, self.path(k))
    }

    fn refuse(&self, k: &str, v: &Value) -> String {
        refused(self.file, &self.path(k), v)
    }

    fn uint(&mut self, k: &str) -> Result<Option<u64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.err(k, format!("{v}: expected a whole number"))),
        }
    }

    fn num(&mut self, k: &str) -> Result<Option<f64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.err(k, format!("{v}: expected a number"))),
        }
    }

    fn string(&mut self, k: &str) -> Result<Option<String>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(k, format!("{v}: expected a string"))),
        }
    }

    fn boolean(&mut self, k: &str) -> Result<Option<bool>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(self.err(k, format!("{v}: expected true or false"))),
        }
    }

    /// Seconds, from a number or a duration string (`30s`, `5m`, `2h`).
    fn seconds(&mut self, k: &str) -> Result<Option<f64>, String> {
        match self.take(k) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => duration(&s)
                .map(Some)
                .ok_or_else(|| self.err(k, format!("\"{s}\": not a finite duration"))),
            Some(v) => Err(self.refuse(k, &v)),
        }
    }

    /// Every key not taken is refused, by name.
    fn done(self) -> Result<(), String> {
        match self.m.iter().find(|(_, v)| !v.is_null()) {
            Some((k, v)) => Err(self.refuse(k, v)),
            None => Ok(()),
        }
    }
}

/// `30`, `30s`, `30 sec`, `5m`, `5min`, `2h`, `2hr`, `2hour` → seconds (AIPerf's duration
/// strings; `inf` has no flag and is refused).
pub(super) fn duration(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" | "hour" => 3600.0,
        _ => return None,
    };
    Some(n * mult)
}

fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// The flags of a whole config; `benchmark` is the (scenario-merged) benchmark table;
/// `cli` is `profile --config`, where `multiRun` and `benchmark.artifacts` map to
/// flags (a plan has its own `repeats` and `output`, so there they stay refused).
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
        multi_run(file, &m, &mut out)?;
    }
    // Consumed by the substitution AIPerf does first; inferbench refuses `{{ … }}` (mod.rs),
    // so variables without a template are inert, as in AIPerf.
    root.take("variables");
    // `false` is AIPerf's default; `true` (--no-sweep-table) is not built.
    if root.boolean("noSweepTable")? == Some(true) {
        return Err(refused(file, "noSweepTable", &Value::Bool(true)));
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
        dataset(file, &at, &d, base, &mut out)?;
    }
    phases(&mut b, &mut out)?;
    if cli && let Some(a) = b.take("artifacts") {
        artifacts(file, &a, &mut out)?;
    }
    if let Some(v) = b.take("slos") {
        slos(file, &v, &mut out)?;
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
    if let Some(u) = e.string("url")? {
        urls.push(u);
    }
    if let Some(v) = e.take("urls") {
        urls.extend(
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string)),
        );
    }
    if urls.len() > 1 {
        return Err(e.err(
            "urls",
            format!(
                "{} URLs: multi-URL load balancing is not built in inferbench plans",
                urls.len()
            ),
        ));
    }
    let mut path = e.string("path")?;
    if let Some(u) = urls.first().filter(|_| !simulated) {
        let (base, url_path) = split_url(u);
        if let Some(p) = url_path {
            if path.is_some() {
                return Err(e.err("path", "given both in url and path: give one"));
            }
            path = Some(p);
        }
        out.extend(["--url".into(), base]);
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
    if e.boolean("useLegacyMaxTokens")? == Some(true) {
        out.push("--use-legacy-max-tokens".into());
    }
    if e.boolean("useServerTokenCount")? == Some(true) {
        out.push("--use-server-token-count".into());
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

fn dataset(
    file: &str,
    at: &str,
    d: &Value,
    base: &Path,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let mut d = Part::new(file, at, d)?;
    d.take("name");
    let ty = d.string("type")?.unwrap_or_else(|| "synthetic".into());
    if let Some(s) = d.string("systemPrompt")? {
        out.extend(["--system-prompt".into(), s]);
    }
    if let Some(s) = d.string("systemPromptFile")? {
        out.extend([
            "--system-prompt-file".into(),
            file_in(&d, "systemPromptFile", &s, base)?,
        ]);
    }
    let sampling = d.string("sampling")?.unwrap_or_else(|| "sequential".into());
    out.extend(["--dataset-sampling-strategy".into(), sampling]);
    match ty.as_str() {
        "synthetic" => {
            if let Some(n) = d.uint("entries")? {
                out.extend(["--num-dataset-entries".into(), n.to_string()]);
            }
            let (mut isl, mut osl) = (d.take("isl"), d.take("osl"));
            if let Some(p) = d.take("prompts") {
                let mut p = Part::new(file, &d.path("prompts"), &p)?;
                isl = isl.or(p.take("isl"));
                osl = osl.or(p.take("osl"));
                if let Some(bs) = p.uint("blockSize")? {
                    out.extend(["--isl-block-size".into(), bs.to_string()]);
                }
                lengths(&p, "isl", isl.as_ref(), "--isl", "--isl-stddev", out)?;
                lengths(&p, "osl", osl.as_ref(), "--osl", "--osl-stddev", out)?;
                p.done()?;
            } else {
                lengths(&d, "isl", isl.as_ref(), "--isl", "--isl-stddev", out)?;
                lengths(&d, "osl", osl.as_ref(), "--osl", "--osl-stddev", out)?;
            }
            // Synthetic media (aiperf_config/media.rs).
            if let Some(v) = d.take("images") {
                super::media::images(file, &d.path("images"), &v, out)?;
            }
            if let Some(v) = d.take("audio") {
                super::media::audio(file, &d.path("audio"), &v, out)?;
            }
            if let Some(v) = d.take("video") {
                super::media::video(file, &d.path("video"), &v)?;
            }
        }
        "file" => {
            let Some(p) = d.string("path")? else {
                return Err(d.err("path", "missing: a file dataset names its file"));
            };
            out.extend(["--input-file".into(), file_in(&d, "path", &p, base)?]);
            if let Some(f) = d.string("format")? {
                out.extend(["--custom-dataset-type".into(), f]);
            }
            if d.boolean("ignoreTraceDelays")? == Some(true) {
                out.push("--ignore-trace-delays".into());
            }
        }
        other => return Err(d.refuse("type", &Value::String(other.into()))),
    }
    d.done()
}

/// A file named by the config, resolved against its directory; it must exist.
fn file_in(d: &Part<'_>, k: &str, p: &str, base: &Path) -> Result<String, String> {
    let path = Path::new(p);
    let resolved = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    if !resolved.exists() {
        return Err(d.err(k, format!("\"{p}\": no such file ({})", resolved.display())));
    }
    Ok(resolved.display().to_string())
}

/// A length distribution: a number, `{value}`, or `{mean, stddev}`. The others (median,
/// peaks, min/max clamps, empirical points) are refused by name.
fn lengths(
    owner: &Part<'_>,
    k: &str,
    v: Option<&Value>,
    mean_flag: &str,
    stddev_flag: &str,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let Some(v) = v else { return Ok(()) };
    let whole = |x: f64, what: &str| -> Result<String, String> {
        if x >= 1.0 && x.fract() == 0.0 && x <= u64::MAX as f64 {
            Ok(format!("{}", x as u64))
        } else {
            Err(owner.err(what, format!("{x}: a token count is a whole number ≥ 1")))
        }
    };
    match v {
        Value::Number(n) => {
            out.extend([mean_flag.into(), whole(n.as_f64().unwrap_or(0.0), k)?]);
        }
        Value::Object(_) => {
            let at = owner.path(k);
            let mut p = Part::new(owner.file, &at, v)?;
            let mean = match (p.num("value")?, p.num("mean")?) {
                (Some(x), None) | (None, Some(x)) => x,
                _ => return Err(p.err("mean", "missing (or given with value)")),
            };
            let stddev = p.num("stddev")?.unwrap_or(0.0);
            p.done()?;
            out.extend([mean_flag.into(), whole(mean, &format!("{k}.mean"))?]);
            out.extend([stddev_flag.into(), fmt_num(stddev)]);
        }
        other => return Err(owner.refuse(k, other)),
    }
    Ok(())
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
        // AIPerf runs such a phase and skips the ramp in silence; here a setting that would
        // do nothing is refused, as the flag is (docs/aiperf-config.md).
        if prefill_cap.is_none() {
            return Err(p.err(
                "prefillRamp",
                format!(
                    "{} s without prefillConcurrency in the phase: refused (the ramp opens the prefill cap, and there is none to open; AIPerf ignores it)",
                    fmt_num(r)
                ),
            ));
        }
        out.extend(["--prefill-concurrency-ramp-duration".into(), fmt_num(r)]);
    }
    if let Some(t) = p.num("failedRequestThreshold")? {
        out.extend(["--failed-request-threshold".into(), fmt_num(t)]);
    }
    p.done()
}

fn warmup_phase(file: &str, at: &str, p: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let mut p = Part::new(file, at, p)?;
    p.take("name");
    p.take("excludeFromResults");
    let ty = p.string("type")?.unwrap_or_default();
    if ty != "concurrency" {
        return Err(p.refuse("type", &Value::String(ty)));
    }
    if let Some(n) = p.uint("requests")? {
        out.extend(["--warmup-request-count".into(), n.to_string()]);
    }
    if let Some(c) = p.uint("concurrency")? {
        out.extend(["--warmup-concurrency".into(), c.to_string()]);
    }
    if let Some(d) = p.seconds("duration")? {
        out.extend(["--warmup-duration".into(), fmt_num(d)]);
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

/// `multiRun`: repeats, cool-down, confidence level and warmup-after-first map to flags.
/// inferbench's repeats always share one seed (42 when none is given), which is AIPerf's
/// `setConsistentSeed: true`; the other seed policies and convergence are refused by name.
fn multi_run(file: &str, m: &Value, out: &mut Vec<String>) -> Result<(), String> {
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
    for (k, accepted) in [("setConsistentSeed", true), ("varySeedPerTrial", false)] {
        if let Some(v) = m.take(k)
            && v.as_bool() != Some(accepted)
        {
            return Err(m.refuse(k, &v));
        }
    }
    m.done()
}

/// `artifacts`: the directory and export prefix map to flags; `summary` and `records` are
/// accepted when they name files inferbench writes anyway (it writes them all);
/// `sliceDuration` becomes `--slice-duration`. Every other part is refused by name.
fn artifacts(file: &str, a: &Value, out: &mut Vec<String>) -> Result<(), String> {
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
    // Off is inferbench's behaviour too.
    for k in [
        "raw",
        "trace",
        "showTraceTiming",
        "autoPlot",
        "plotRequired",
    ] {
        if a.boolean(k)? == Some(true) {
            return Err(a.refuse(k, &Value::Bool(true)));
        }
    }
    a.done()
}

/// `slos: {metric: bound}` → `--goodput "metric:bound …"` (AIPerf's SLO syntax, display
/// units; the metric names are checked when the flag is parsed).
fn slos(file: &str, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let Value::Object(m) = v else {
        return Err(refused(file, "benchmark.slos", v));
    };
    let mut items = Vec::new();
    for (k, x) in m {
        let Some(n) = x.as_f64() else {
            return Err(refused(file, &join("benchmark.slos", k), x));
        };
        items.push(format!("{k}:{}", fmt_num(n)));
    }
    if !items.is_empty() {
        out.extend(["--goodput".into(), items.join(" ")]);
    }
    Ok(())
}
