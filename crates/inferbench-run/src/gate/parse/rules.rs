//! One `[[rule]]` table → a [`Rule`], by family.

use super::catalogue;
use super::reader::Table;
use super::units;
use crate::Failure;
use crate::gate::spec::*;

/// What every rule is read against.
pub struct Ctx {
    pub set: String,
}

const FAMILIES: &str = "serialization, workload, load_delivery, client_headroom, latency, goodput, correctness, reproducibility, throughput";

pub fn rule(ctx: &Ctx, t: &Table, line: usize) -> Result<Rule, Failure> {
    let id = t.required_string("id")?;
    if id.trim().is_empty() || id.chars().any(char::is_whitespace) {
        return Err(t.err("id", format!("\"{id}\": a non-empty id without spaces")));
    }
    let family = t.required_string("family")?;
    let Some(f) = Family::parse(&family) else {
        return Err(t.err(
            "family",
            format!("unknown family \"{family}\" (known: {FAMILIES})"),
        ));
    };
    let t2 = t.relabel(format!("rule \"{id}\""));
    t2.mark("id");
    t2.mark("family");
    let t = &t2;
    let body = match f {
        Family::Serialization => serialization(t)?,
        Family::Workload => workload(t)?,
        Family::LoadDelivery => load_delivery(t)?,
        Family::ClientHeadroom => client_headroom(t)?,
        Family::Latency => latency(ctx, t)?,
        Family::Goodput => goodput(ctx, t)?,
        Family::Correctness => correctness(t)?,
        Family::Reproducibility => reproducibility(t)?,
        Family::Throughput => throughput(ctx, t)?,
    };
    Ok(Rule { id, line, body })
}

fn digest(t: &Table, key: &str) -> Result<Option<String>, Failure> {
    match t.string(key)? {
        Some(d) if !inferbench_core::canonical::is_sha256_id(&d) => Err(t.err(
            key,
            format!("\"{d}\": a digest sha256:<64 hex digits> is needed"),
        )),
        d => Ok(d),
    }
}

fn throttle(t: &Table, key: &str) -> Result<Throttle, Failure> {
    Ok(match t.choice(key, &["forbid", "allow"])?.as_deref() {
        Some("allow") => Throttle::Allow,
        _ => Throttle::Forbid,
    })
}

fn serialization(t: &Table) -> Result<RuleBody, Failure> {
    let frozen_workload = digest(t, "frozen_workload")?;
    let chat_template = digest(t, "chat_template")?;
    let inspect_sample = t.integer("inspect_sample")?.unwrap_or(4);
    if inspect_sample > 64 {
        return Err(t.err("inspect_sample", format!("{inspect_sample}: at most 64")));
    }
    let mut require = Vec::new();
    for r in t.strings("require")?.unwrap_or_default() {
        let Some(q) = Requirement::parse(&r) else {
            let known: Vec<&str> = Requirement::ALL.iter().map(|r| r.as_str()).collect();
            return Err(t.err(
                "require",
                format!("unknown requirement \"{r}\" (known: {})", known.join(", ")),
            ));
        };
        if !require.contains(&q) {
            require.push(q);
        }
    }
    t.finish("id, family, frozen_workload, chat_template, inspect_sample, require")?;
    if frozen_workload.is_none() && chat_template.is_none() && require.is_empty() {
        return Err(t.err(
            "",
            "checks nothing: give frozen_workload, chat_template or require",
        ));
    }
    Ok(RuleBody::Serialization(SerializationRule {
        frozen_workload,
        chat_template,
        inspect_sample: inspect_sample as usize,
        require,
    }))
}

fn length(t: &Table, key: &str) -> Result<Option<LengthSpec>, Failure> {
    let Some(l) = t.table(key)? else {
        return Ok(None);
    };
    let Some(mean) = l.number("mean")? else {
        return Err(l.err("", "`mean` (tokens) is required"));
    };
    if mean <= 0.0 {
        return Err(l.err("mean", format!("{mean}: must be positive")));
    }
    let exact_fraction_min = l.number_in("exact_fraction_min", 0.0, 1.0)?;
    let mean_band = l.pair("mean_band")?;
    if let Some((lo, hi)) = mean_band
        && !(lo > 0.0 && lo <= 1.0 && hi >= 1.0)
    {
        return Err(l.err(
            "mean_band",
            format!("[{lo}, {hi}]: a band around 1, e.g. [0.9, 1.1]"),
        ));
    }
    l.finish("mean, exact_fraction_min, mean_band")?;
    if exact_fraction_min.is_none() && mean_band.is_none() {
        return Err(l.err("", "checks nothing: give exact_fraction_min or mean_band"));
    }
    Ok(Some(LengthSpec {
        mean,
        exact_fraction_min,
        mean_band,
    }))
}

fn workload(t: &Table) -> Result<RuleBody, Failure> {
    let token_source = t.string("token_source")?;
    if let Some(s) = &token_source {
        let ok = s == "server_usage"
            || s == "tokenizer"
            || s.strip_prefix("tokenizer:")
                .is_some_and(inferbench_core::canonical::is_sha256_id);
        if !ok {
            return Err(t.err(
                "token_source",
                format!("\"{s}\": server_usage, tokenizer, or tokenizer:sha256:<hex>"),
            ));
        }
    }
    let isl = length(t, "isl")?;
    let osl = length(t, "osl")?;
    let (mut ignore_eos, mut min_tokens) = (None, None);
    if let Some(g) = t.table("generation")? {
        ignore_eos = g.boolean("ignore_eos")?;
        min_tokens = g.integer("min_tokens")?;
        g.finish("ignore_eos, min_tokens")?;
    }
    t.finish("id, family, token_source, isl, osl, generation")?;
    if token_source.is_none()
        && isl.is_none()
        && osl.is_none()
        && ignore_eos.is_none()
        && min_tokens.is_none()
    {
        return Err(t.err(
            "",
            "checks nothing: give token_source, isl, osl or generation",
        ));
    }
    Ok(RuleBody::Workload(WorkloadRule {
        token_source,
        isl,
        osl,
        ignore_eos,
        min_tokens,
    }))
}

fn load_delivery(t: &Table) -> Result<RuleBody, Failure> {
    let arrival = match t.table("arrival")? {
        None => None,
        Some(a) => {
            let mode = a
                .choice("mode", &["rate", "concurrency", "fixed_schedule"])?
                .ok_or_else(|| {
                    a.err("", "`mode` is required (rate, concurrency, fixed_schedule)")
                })?;
            let rate_rps = a.number("rate_rps")?;
            if let Some(r) = rate_rps
                && r <= 0.0
            {
                return Err(a.err("rate_rps", format!("{r}: must be positive")));
            }
            let concurrency = a.integer("concurrency")?;
            let process = a.choice("process", &["poisson", "constant", "gamma"])?;
            a.finish("mode, rate_rps, concurrency, process")?;
            if mode == "rate" && rate_rps.is_none() {
                return Err(a.err("", "mode = \"rate\" needs rate_rps"));
            }
            Some(ArrivalSpec {
                mode,
                rate_rps,
                concurrency,
                process,
            })
        }
    };
    let achieved_rate_band = t.pair("achieved_rate_band")?;
    let send_lag_p99_ms_max = t.number_in("send_lag_p99_ms_max", 0.0, f64::MAX)?;
    let dispatched_fraction_min = t.number_in("dispatched_fraction_min", 0.0, 1.0)?;
    let unapproved_throttle = throttle(t, "unapproved_throttle")?;
    t.finish("id, family, arrival, achieved_rate_band, send_lag_p99_ms_max, dispatched_fraction_min, unapproved_throttle")?;
    Ok(RuleBody::LoadDelivery(LoadDeliveryRule {
        arrival,
        achieved_rate_band,
        send_lag_p99_ms_max,
        dispatched_fraction_min,
        unapproved_throttle,
    }))
}

fn client_headroom(t: &Table) -> Result<RuleBody, Failure> {
    let worker_levels_min = t.integer("worker_levels_min")?;
    let plateau_tolerance = t.number_in("plateau_tolerance", 0.0, 1.0)?;
    let client_cpu_pressure_some_avg10_max =
        t.number_in("client_cpu_pressure_some_avg10_max", 0.0, 100.0)?;
    let client_cpu_utilization_max = t.number_in("client_cpu_utilization_max", 0.0, f64::MAX)?;
    let backlog_growth = throttle(t, "backlog_growth")?;
    let qualification = match t.string("qualification")? {
        Some(p) => Some(qualification(t, &p)?),
        None => None,
    };
    t.finish("id, family, worker_levels_min, plateau_tolerance, client_cpu_pressure_some_avg10_max, client_cpu_utilization_max, backlog_growth, qualification")?;
    Ok(RuleBody::ClientHeadroom(ClientHeadroomRule {
        worker_levels_min: worker_levels_min.map(|w| w as u32),
        plateau_tolerance,
        client_cpu_pressure_some_avg10_max,
        client_cpu_utilization_max,
        backlog_growth,
        qualification,
    }))
}

/// Reads the `qualification.json` a rule names, relative to the spec file's directory.
fn qualification(t: &Table, path: &str) -> Result<QualificationRef, Failure> {
    let spec_dir = std::path::Path::new(t.src.file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let full = spec_dir.join(path);
    let bytes = std::fs::read(&full).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file".to_string()
        } else {
            e.to_string()
        };
        t.err("qualification", format!("{}: {why}", full.display()))
    })?;
    let decided = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|e| e.to_string())
        .and_then(|v| crate::qualify::from_json(&v))
        .map_err(|e| t.err("qualification", format!("{}: {e}", full.display())))?;
    Ok(QualificationRef {
        path: path.to_string(),
        digest: inferbench_core::canonical::sha256_id(&bytes),
        decided: Box::new(decided),
    })
}

/// A metric of the rule's set; `distribution` asks for a per-request metric.
pub fn metric(
    ctx: &Ctx,
    t: &Table,
    key: &str,
    value: &str,
    distribution: bool,
) -> Result<&'static catalogue::Known, Failure> {
    let known = catalogue::metrics(&ctx.set).expect("the set was checked");
    let Some(k) = known.get(value) else {
        let want: Vec<&str> = known
            .iter()
            .filter(|(tag, k)| k.distribution == distribution && !catalogue::is_pooled(tag))
            .map(|(t, _)| t.as_str())
            .collect();
        return Err(t.err(
            key,
            format!(
                "unknown metric \"{value}\" under {} ({}: {})",
                ctx.set,
                if distribution {
                    "per-request metrics"
                } else {
                    "run-level metrics"
                },
                want.join(", ")
            ),
        ));
    };
    if k.distribution != distribution {
        return Err(t.err(
            key,
            format!(
                "\"{value}\" is a {} metric under {}; this rule needs a {} one",
                if k.distribution {
                    "per-request"
                } else {
                    "run-level"
                },
                ctx.set,
                if distribution {
                    "per-request"
                } else {
                    "run-level"
                }
            ),
        ));
    }
    Ok(k)
}

fn stat(t: &Table, s: &str) -> Result<StatSpec, Failure> {
    let bad = || {
        t.err(
            "stat",
            format!("\"{s}\": p50, p95, p99, p99.9 (any 0 < q < 100), avg or max"),
        )
    };
    match s {
        "avg" | "mean" => Ok(StatSpec::Mean),
        "max" => Ok(StatSpec::Max),
        "median" => Ok(StatSpec::Percentile(50.0)),
        _ => {
            let q: f64 = s
                .strip_prefix('p')
                .map(|q| q.replace('_', "."))
                .and_then(|q| q.parse().ok())
                .ok_or_else(bad)?;
            if q > 0.0 && q < 100.0 {
                Ok(StatSpec::Percentile(q))
            } else {
                Err(bad())
            }
        }
    }
}

fn op(t: &Table) -> Result<Op, Failure> {
    Ok(match t.choice("op", &["<=", "<", ">=", ">"])?.as_deref() {
        Some("<") => Op::Lt,
        Some(">=") => Op::Ge,
        Some(">") => Op::Gt,
        _ => Op::Le,
    })
}

fn latency(ctx: &Ctx, t: &Table) -> Result<RuleBody, Failure> {
    let metric_name = t.required_string("metric")?;
    let population = t
        .choice("population", &["per_request"])?
        .unwrap_or_else(|| "per_request".into());
    let k = metric(ctx, t, "metric", &metric_name, true)?;
    if catalogue::is_pooled(&metric_name) {
        return Err(t.err(
            "metric",
            format!("\"{metric_name}\" pools every chunk gap of every request: it has no per-request population"),
        ));
    }
    let timing_origin = match t
        .choice("timing_origin", &["sent", "planned_send"])?
        .as_deref()
    {
        Some("planned_send") => {
            if !matches!(
                metric_name.as_str(),
                "time_to_first_token" | "time_to_first_output_token" | "request_latency"
            ) {
                return Err(t.err(
                    "timing_origin",
                    format!("planned_send: only time_to_first_token, time_to_first_output_token and request_latency are measured from the planned send, not \"{metric_name}\""),
                ));
            }
            TimingOrigin::PlannedSend
        }
        _ => TimingOrigin::Sent,
    };
    let stat = stat(t, &t.required_string("stat")?)?;
    let op = op(t)?;
    let Some(limit) = t.number("limit")? else {
        return Err(t.err("", "`limit` is required"));
    };
    let Some(unit) = t.string("unit")? else {
        return Err(t.err(
            "limit",
            format!("a bound without a unit: add unit = \"{}\"", k.unit),
        ));
    };
    let limit = units::convert(limit, &unit, &k.unit).map_err(|e| t.err("unit", e))?;
    let method = match t
        .choice("method", &["order_statistic", "bootstrap", "point"])?
        .as_deref()
    {
        Some("bootstrap") => BoundMethod::Bootstrap,
        Some("point") => BoundMethod::Point,
        Some(_) => BoundMethod::OrderStatistic,
        None if matches!(stat, StatSpec::Percentile(_)) => BoundMethod::OrderStatistic,
        None => BoundMethod::Bootstrap,
    };
    if method == BoundMethod::OrderStatistic && !matches!(stat, StatSpec::Percentile(_)) {
        return Err(t.err(
            "method",
            "order_statistic bounds a percentile; use bootstrap or point for avg and max",
        ));
    }
    if method == BoundMethod::Bootstrap && stat == StatSpec::Max {
        return Err(t.err("method", "the maximum has no bootstrap bound; use point"));
    }
    let include_errors = t.boolean("include_errors")?.unwrap_or(false);
    let min_samples = t.integer("min_samples")?;
    t.finish("id, family, metric, population, timing_origin, stat, op, limit, unit, method, include_errors, min_samples")?;
    Ok(RuleBody::Latency(LatencyRule {
        metric: metric_name,
        population,
        timing_origin,
        stat,
        op,
        limit,
        unit,
        method,
        include_errors,
        min_samples,
    }))
}

fn goodput(ctx: &Ctx, t: &Table) -> Result<RuleBody, Failure> {
    let Some(s) = t.table("slo")? else {
        return Err(t.err("", "`slo` is required: { metric = \"LIMIT UNIT\", … }"));
    };
    let mut slo = Vec::new();
    for key in s.keys() {
        let text = match s.raw(&key) {
            Some(toml::Value::String(x)) => x.clone(),
            Some(v) => {
                return Err(s.err(
                    &key,
                    format!(
                        "a limit with its unit as a string is needed (\"2000 ms\"), got {}",
                        super::reader::kind(v)
                    ),
                ));
            }
            None => continue,
        };
        let k = metric(ctx, &s, &key, &key, true)?;
        let (v, unit) = units::quantity(&text).map_err(|e| s.err(&key, e))?;
        let limit = units::convert(v, &unit, &k.unit).map_err(|e| s.err(&key, e))?;
        slo.push((key.clone(), limit));
    }
    s.take_all();
    if slo.is_empty() {
        return Err(s.err("", "no SLO: name at least one metric"));
    }
    let denominator = match t
        .choice("denominator", &["attempted", "completed"])?
        .as_deref()
    {
        Some("completed") => Denominator::Completed,
        _ => Denominator::Attempted,
    };
    let Some(min_fraction) = t.number_in("min_fraction", 0.0, 1.0)? else {
        return Err(t.err("", "`min_fraction` (0–1) is required"));
    };
    let bound = match t.choice("bound", &["wilson_lower", "point"])?.as_deref() {
        Some("point") => FractionBound::Point,
        _ => FractionBound::WilsonLower,
    };
    if let Some(e) = t.string("effective_n")?
        && e != "iid"
    {
        return Err(t.err(
            "effective_n",
            format!("\"{e}\": a design-effect correction is not built in inferbench yet; write \"iid\" (requests taken as independent; the verdict names the gap)"),
        ));
    }
    t.finish("id, family, slo, denominator, min_fraction, bound, effective_n")?;
    Ok(RuleBody::Goodput(GoodputRule {
        slo,
        denominator,
        min_fraction,
        bound,
    }))
}

fn correctness(t: &Table) -> Result<RuleBody, Failure> {
    let answers = digest(t, "answers")?;
    if let Some(s) = t.string("scorer")?
        && s != "expected"
    {
        return Err(t.err(
            "scorer",
            format!("\"{s}\": each dataset row names its own answer kind (docs/correctness.md); write \"expected\" or leave it out"),
        ));
    }
    let min_score = t.number_in("min_score", 0.0, 1.0)?;
    let min_score_relative = t.number_in("min_score_relative", 0.0, 1.0)?;
    let reference_score = t.number_in("reference_score", 0.0, 1.0)?;
    let degenerate_output_max = t.number_in("degenerate_output_max", 0.0, 1.0)?;
    t.finish("id, family, answers, scorer, min_score, min_score_relative, reference_score, degenerate_output_max")?;
    if min_score.is_none() && min_score_relative.is_none() && degenerate_output_max.is_none() {
        return Err(t.err(
            "",
            "checks nothing: give min_score, min_score_relative or degenerate_output_max",
        ));
    }
    if reference_score.is_some() && min_score_relative.is_none() {
        return Err(t.err("reference_score", "is read only with min_score_relative"));
    }
    Ok(RuleBody::Correctness(CorrectnessRule {
        answers,
        min_score,
        min_score_relative,
        reference_score,
        degenerate_output_max,
    }))
}

fn compare_with(t: &Table, required: bool) -> Result<Option<CompareWith>, Failure> {
    match t.choice("compare", &["self", "baseline"])?.as_deref() {
        Some("self") => Ok(Some(CompareWith::SelfRuns)),
        Some(_) => Ok(Some(CompareWith::Baseline)),
        None if required => Err(t.err("", "`compare` is required: \"self\" or \"baseline\"")),
        None => Ok(None),
    }
}

/// `compare`'s methods: Welch TOST on log values with ≥ 2 runs a side, else the bootstrap.
fn method(t: &Table) -> Result<(), Failure> {
    t.choice("method", &["tost_welch_log", "auto"])?;
    Ok(())
}

fn reproducibility(t: &Table) -> Result<RuleBody, Failure> {
    let compare = compare_with(t, true)?.expect("required");
    method(t)?;
    let Some(m) = t.table("margins")? else {
        return Err(t.err(
            "",
            "`margins` is required: { metric = \"3%\", \"metric.p95\" = \"5%\" }",
        ));
    };
    let mut margins = Vec::new();
    for key in m.keys() {
        let Some(toml::Value::String(v)) = m.raw(&key) else {
            return Err(m.err(
                &key,
                "a margin string is needed, e.g. \"3%\", \"1.5pp\", \"5ms\"",
            ));
        };
        let v = v.trim();
        let v = if v.starts_with('±') || v.starts_with("+-") {
            v.to_string()
        } else {
            format!("±{}", v.trim_start_matches('+'))
        };
        crate::compare::parse_margin(&format!("{key}={v}"), "margin")
            .map_err(|e| m.err(&key, e))?;
        margins.push((key.clone(), v));
    }
    m.take_all();
    if margins.is_empty() {
        return Err(m.err("", "no margin: name at least one metric"));
    }
    t.finish("id, family, compare, method, margins")?;
    Ok(RuleBody::Reproducibility(ReproducibilityRule {
        compare,
        margins,
    }))
}

fn throughput(ctx: &Ctx, t: &Table) -> Result<RuleBody, Failure> {
    let name = t.required_string("metric")?;
    let k = metric(ctx, t, "metric", &name, false)?;
    let compare = compare_with(t, false)?;
    if compare == Some(CompareWith::SelfRuns) {
        return Err(t.err("compare", "a throughput rule compares with \"baseline\" (reproducibility rules compare a candidate with itself)"));
    }
    method(t)?;
    let non_inferiority = match t.string("non_inferiority")? {
        None => None,
        Some(s) => {
            let (v, unit) = units::quantity(&s).map_err(|e| t.err("non_inferiority", e))?;
            if unit != "%" || v >= 0.0 || v <= -100.0 {
                return Err(t.err(
                    "non_inferiority",
                    format!("\"{s}\": a negative percentage, e.g. \"-2%\""),
                ));
            }
            Some(v / 100.0)
        }
    };
    if non_inferiority.is_some() && compare != Some(CompareWith::Baseline) {
        return Err(t.err("non_inferiority", "needs compare = \"baseline\""));
    }
    let min = t.number("min")?;
    let unit = t.string("unit")?;
    let min = match (min, &unit) {
        (Some(_), None) => {
            return Err(t.err(
                "min",
                format!("a bound without a unit: add unit = \"{}\"", k.unit),
            ));
        }
        (Some(v), Some(u)) => Some(units::convert(v, u, &k.unit).map_err(|e| t.err("unit", e))?),
        (None, _) => None,
    };
    t.finish("id, family, metric, compare, method, non_inferiority, min, unit")?;
    if min.is_none() && non_inferiority.is_none() {
        return Err(t.err(
            "",
            "checks nothing: give min (with unit) or compare = \"baseline\" with non_inferiority",
        ));
    }
    Ok(RuleBody::Throughput(ThroughputRule {
        metric: name,
        compare,
        non_inferiority,
        min,
        unit,
    }))
}
