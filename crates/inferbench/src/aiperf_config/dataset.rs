//! `benchmark.dataset`: synthetic, file (a path, or records given inline) and public
//! datasets, with their length distributions, prefix prompts and conversations.

use std::path::Path;

use serde_json::Value;

use super::part::{Part, fmt_num};

/// The flags of one dataset table at `at`.
pub(super) fn dataset(
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
    // inferbench has one seed for the whole run: a dataset's own seed would also move the
    // arrivals, so only the run's seed itself is accepted here (mapped from `randomSeed`).
    if let Some(v) = d.take("randomSeed") {
        return Err(d.refuse_why(
            "randomSeed",
            &v,
            "inferbench has one seed per run: give it as the top-level randomSeed",
        ));
    }
    match ty.as_str() {
        "synthetic" => synthetic(&mut d, out)?,
        "file" => file_dataset(&mut d, base, out)?,
        "public" => {
            if let Some(name) = d.string("dataset")? {
                // The run asks for the local file (--public-dataset-path): no download.
                out.extend(["--public-dataset".into(), name]);
            }
            // The most records kept (docs/datasets.md: the loader stops at this many).
            if let Some(n) = d.uint("entries")? {
                out.extend(["--num-dataset-entries".into(), n.to_string()]);
            }
            if let Some(p) = d.take("prompts") {
                prompt_selection(&d, &p)?;
            }
            if let Some(o) = d.take("osl") {
                lengths(&d, "osl", &o, "--osl", "--osl-stddev", out)?;
            }
        }
        other => return Err(d.refuse("type", &Value::String(other.into()))),
    }
    d.done()
}

fn synthetic(d: &mut Part<'_>, out: &mut Vec<String>) -> Result<(), String> {
    if let Some(n) = d.uint("entries")? {
        out.extend(["--num-dataset-entries".into(), n.to_string()]);
    }
    let (mut isl, mut osl) = (d.take("isl"), d.take("osl"));
    if let Some(p) = d.take("prompts") {
        let mut p = Part::new(d.file, &d.path("prompts"), &p)?;
        isl = isl.or(p.take("isl"));
        osl = osl.or(p.take("osl"));
        if let Some(bs) = p.uint("blockSize")? {
            out.extend(["--isl-block-size".into(), bs.to_string()]);
        }
        if let Some(bs) = p.uint("batchSize")? {
            out.extend(["--batch-size".into(), bs.to_string()]);
        }
        if let Some(r) = p.take("randomRangeRatio") {
            let r = match r {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.extend(["--random-range-ratio".into(), r]);
        }
        if let Some(s) = p.string("randomCorpusStyle")? {
            out.extend(["--random-corpus-style".into(), s]);
        }
        if let Some(c) = p.string("corpus")? {
            out.extend(["--prompt-corpus".into(), c]);
        }
        if let Some(c) = p.take("cacheBust") {
            cache_bust(&p, &c)?;
        }
        // AIPerf ignores isl and osl when a sequence distribution is given.
        match p.take("sequenceDistribution") {
            Some(s) => sequence_distribution(&p, &s, out)?,
            None => lengths_pair(&p, isl.as_ref(), osl.as_ref(), out)?,
        }
        p.done()?;
    } else {
        lengths_pair(d, isl.as_ref(), osl.as_ref(), out)?;
    }
    if let Some(p) = d.take("prefixPrompts") {
        let mut p = Part::new(d.file, &d.path("prefixPrompts"), &p)?;
        for (k, flag) in [
            ("poolSize", "--num-prefix-prompts"),
            ("length", "--prefix-prompt-length"),
            ("sharedSystemLength", "--shared-system-prompt-length"),
            ("userContextLength", "--user-context-prompt-length"),
        ] {
            if let Some(n) = p.uint(k)? {
                out.extend([flag.into(), n.to_string()]);
            }
        }
        p.done()?;
    }
    if let Some(t) = d.take("turns") {
        let (mean, stddev) = normal(d, "turns", &t)?;
        out.extend(["--conversation-turn-mean".into(), fmt_num(mean)]);
        out.extend(["--conversation-turn-stddev".into(), fmt_num(stddev)]);
    }
    if let Some(t) = d.take("turnDelay") {
        let (mean, stddev) = normal(d, "turnDelay", &t)?;
        out.extend(["--conversation-turn-delay-mean".into(), fmt_num(mean)]);
        out.extend(["--conversation-turn-delay-stddev".into(), fmt_num(stddev)]);
    }
    if let Some(r) = d.num("turnDelayRatio")? {
        out.extend(["--conversation-turn-delay-ratio".into(), fmt_num(r)]);
    }
    // Synthetic media (aiperf_config/media.rs).
    if let Some(v) = d.take("images") {
        super::media::images(d.file, &d.path("images"), &v, out)?;
    }
    if let Some(v) = d.take("audio") {
        super::media::audio(d.file, &d.path("audio"), &v, out)?;
    }
    if let Some(v) = d.take("video") {
        super::media::video(d.file, &d.path("video"), &v)?;
    }
    Ok(())
}

/// `cacheBust: {target: none}` is AIPerf's default (no marker); a marker is not built.
fn cache_bust(p: &Part<'_>, c: &Value) -> Result<(), String> {
    let target = match c {
        Value::String(s) => Some(s.as_str()),
        Value::Object(m) => m.get("target").and_then(Value::as_str),
        _ => None,
    };
    if target == Some("none") {
        return Ok(());
    }
    Err(p.refuse_why(
        "cacheBust",
        c,
        "cache-bust markers are not built; only target none is",
    ))
}

/// `prompts: {corpus}` of a file or public dataset: only what the loader synthesizes reads
/// it (hash-id traces); inferbench's corpus flag is `--prompt-corpus`.
fn prompt_selection(d: &Part<'_>, p: &Value) -> Result<(), String> {
    let p = Part::new(d.file, &d.path("prompts"), p)?;
    p.done()
}

fn file_dataset(d: &mut Part<'_>, base: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let format = d.string("format")?;
    match (d.string("path")?, d.take("records")) {
        (Some(_), Some(_)) => {
            return Err(d.err("records", "give path or records, not both"));
        }
        (Some(p), None) => {
            out.extend(["--input-file".into(), file_in(d, "path", &p, base)?]);
            if let Some(f) = format {
                out.extend(["--custom-dataset-type".into(), f]);
            }
        }
        (None, Some(records)) => {
            // AIPerf trusts the format of inline records (default single_turn): there is
            // no file to detect it from.
            let f = format.unwrap_or_else(|| "single_turn".into());
            let written = super::inline::write_records(d, &records, &f)?;
            out.extend(["--input-file".into(), written]);
            out.extend(["--custom-dataset-type".into(), f]);
        }
        (None, None) => {
            return Err(d.err(
                "path",
                "missing: a file dataset names its file (or records)",
            ));
        }
    }
    if d.boolean("ignoreTraceDelays")? == Some(true) {
        out.push("--ignore-trace-delays".into());
    }
    if let Some(bs) = d.uint("blockSize")? {
        out.extend(["--isl-block-size".into(), bs.to_string()]);
    }
    if let Some(o) = d.take("osl") {
        lengths(d, "osl", &o, "--osl", "--osl-stddev", out)?;
    }
    if let Some(s) = d.take("synthesis") {
        super::replay::synthesis(d, &s, out)?;
    }
    super::replay::file_keys(d, out)?;
    if let Some(p) = d.take("prompts") {
        prompt_selection(d, &p)?;
    }
    if let Some(c) = d.take("cacheBust") {
        cache_bust(d, &c)?;
    }
    if let Some(v) = d.take("entries") {
        return Err(d.refuse_why(
            "entries",
            &v,
            "a dataset file is read whole; cut the file instead",
        ));
    }
    Ok(())
}

/// A file named by the config, resolved against its directory; it must exist.
pub(super) fn file_in(d: &Part<'_>, k: &str, p: &str, base: &Path) -> Result<String, String> {
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

/// A length distribution as AIPerf reads one: normal (a number, `{value}`, `{mean, stddev}`)
/// or a weighted mixture of normals (`peaks`, or `points` of fixed values).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Dist {
    Normal {
        mean: f64,
        stddev: f64,
    },
    /// (weight as a fraction of 1, mean, stddev)
    Mixture(Vec<(f64, f64, f64)>),
}

/// The distribution at `owner.k`. Log-normal (`median`) and clamps (`min`, `max`) are
/// refused by name here (turn counts and delays are normal draws); ISL and OSL take them
/// through `--isl-dist`/`--osl-dist` (see `lengths`).
pub(super) fn dist(owner: &Part<'_>, k: &str, v: &Value) -> Result<Dist, String> {
    dist_at(owner.file, &owner.path(k), v)
}

fn dist_at(file: &str, at: &str, v: &Value) -> Result<Dist, String> {
    match v {
        Value::Number(n) => Ok(Dist::Normal {
            mean: n.as_f64().unwrap_or(0.0),
            stddev: 0.0,
        }),
        Value::Object(_) => {
            let mut p = Part::new(file, at, v)?;
            // `type` only names the form, which the keys already tell.
            p.take("type");
            for clamp in ["min", "max"] {
                if let Some(x) = p.take(clamp) {
                    return Err(p.refuse_why(
                        clamp,
                        &x,
                        "a clamped length distribution has no inferbench flag",
                    ));
                }
            }
            if let Some(x) = p.take("median") {
                return Err(p.refuse_why(
                    "median",
                    &x,
                    "a log-normal length (mean and median) has no inferbench flag: lengths are normal draws (mean, stddev)",
                ));
            }
            let mut parts = Vec::new();
            if let Some(peaks) = p.take("peaks") {
                for (i, item) in peaks.as_array().into_iter().flatten().enumerate() {
                    let here = format!("{at}.peaks[{i}]");
                    let mut q = Part::new(file, &here, item)?;
                    let w = q.num("weight")?.unwrap_or(1.0);
                    match dist_at(file, &here, &Value::Object(q.m.clone()))? {
                        Dist::Normal { mean, stddev } => parts.push((w, mean, stddev)),
                        Dist::Mixture(_) => {
                            return Err(format!("{file}: {here}: a mixture inside a mixture"));
                        }
                    }
                }
            } else if let Some(points) = p.take("points") {
                for (i, item) in points.as_array().into_iter().flatten().enumerate() {
                    let mut q = Part::new(file, &format!("{at}.points[{i}]"), item)?;
                    let value = q.num("value")?.ok_or_else(|| q.err("value", "missing"))?;
                    let w = q.num("weight")?.unwrap_or(1.0);
                    q.done()?;
                    parts.push((w, value, 0.0));
                }
            } else {
                let mean = match (p.num("value")?, p.num("mean")?) {
                    (Some(x), None) | (None, Some(x)) => x,
                    (Some(_), Some(_)) => return Err(p.err("mean", "given with value: give one")),
                    (None, None) => return Err(p.err("mean", "missing")),
                };
                let stddev = p.num("stddev")?.unwrap_or(0.0);
                p.done()?;
                return Ok(Dist::Normal { mean, stddev });
            }
            p.done()?;
            mixture(file, at, parts)
        }
        other => Err(super::refused(file, at, other)),
    }
}

fn mixture(file: &str, at: &str, parts: Vec<(f64, f64, f64)>) -> Result<Dist, String> {
    let total: f64 = parts.iter().map(|x| x.0).sum();
    if parts.is_empty() || !(total.is_finite() && total > 0.0) || parts.iter().any(|x| x.0 < 0.0) {
        return Err(format!(
            "{file}: {at}: the weights must be ≥ 0 with a positive sum"
        ));
    }
    Ok(Dist::Mixture(
        parts
            .into_iter()
            .map(|(w, m, s)| (w / total, m, s))
            .collect(),
    ))
}

/// A normal distribution (turns, turn delays): a mixture is refused, naming it.
fn normal(owner: &Part<'_>, k: &str, v: &Value) -> Result<(f64, f64), String> {
    match dist(owner, k, v)? {
        Dist::Normal { mean, stddev } => Ok((mean, stddev)),
        Dist::Mixture(_) => Err(owner.refuse_why(
            k,
            v,
            "a mixture has no inferbench flag here (--seq-dist mixes ISL and OSL only)",
        )),
    }
}

/// A token count: a whole number ≥ 1.
fn whole(owner: &Part<'_>, what: &str, x: f64) -> Result<u64, String> {
    if x >= 1.0 && x.fract() == 0.0 && x <= u64::MAX as f64 {
        Ok(x as u64)
    } else {
        Err(owner.err(what, format!("{x}: a token count is a whole number ≥ 1")))
    }
}

/// A length in the general form (log-normal, empirical, clamps, or a mixture holding one) as
/// `--isl-dist`/`--osl-dist` JSON, checked here so that an error names the config's path.
fn general(owner: &Part<'_>, k: &str, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let at = format!("{}: {}", owner.file, owner.path(k));
    inferbench_workload::dataset::LengthShape::from_value(&at, v)?;
    out.extend([format!("--{k}-dist"), v.to_string()]);
    Ok(())
}

/// One length as `--isl`/`--isl-stddev`, or `--isl-dist` when the form needs it (a mixture
/// of normals is refused: the caller handles those).
fn lengths(
    owner: &Part<'_>,
    k: &str,
    v: &Value,
    mean_flag: &str,
    stddev_flag: &str,
    out: &mut Vec<String>,
) -> Result<(), String> {
    if inferbench_workload::dataset::LengthShape::needs_general(v) {
        return general(owner, k, v, out);
    }
    match dist(owner, k, v)? {
        Dist::Normal { mean, stddev } => {
            out.extend([mean_flag.into(), whole(owner, k, mean)?.to_string()]);
            // A plain number is a fixed length: the stddev flag keeps its default, 0.
            if !v.is_number() {
                out.extend([stddev_flag.into(), fmt_num(stddev)]);
            }
            Ok(())
        }
        Dist::Mixture(_) => Err(owner.refuse_why(
            k,
            v,
            "a mixture here has no inferbench flag (--seq-dist mixes synthetic ISL and OSL)",
        )),
    }
}

/// ISL and OSL of a synthetic dataset. Normal ones become `--isl`/`--osl` (with stddevs);
/// when either is a mixture, the two become one `--seq-dist`: every (ISL peak, OSL peak)
/// pair with the product of their weights, which is the same joint distribution as
/// AIPerf's independent draws.
fn lengths_pair(
    owner: &Part<'_>,
    isl: Option<&Value>,
    osl: Option<&Value>,
    out: &mut Vec<String>,
) -> Result<(), String> {
    // A log-normal, empirical or clamped length anywhere: each axis on its own
    // (`--isl-dist`, `--osl-dist`), drawn independently as AIPerf draws them.
    let needs =
        |v: Option<&Value>| v.is_some_and(inferbench_workload::dataset::LengthShape::needs_general);
    if needs(isl) || needs(osl) {
        for (k, v) in [("isl", isl), ("osl", osl)] {
            if let Some(v) = v {
                general(owner, k, v, out)?;
            }
        }
        return Ok(());
    }
    let di = isl.map(|v| dist(owner, "isl", v)).transpose()?;
    let do_ = osl.map(|v| dist(owner, "osl", v)).transpose()?;
    let mixed = matches!(di, Some(Dist::Mixture(_))) || matches!(do_, Some(Dist::Mixture(_)));
    if !mixed {
        if let Some(v) = isl {
            lengths(owner, "isl", v, "--isl", "--isl-stddev", out)?;
        }
        if let Some(v) = osl {
            lengths(owner, "osl", v, "--osl", "--osl-stddev", out)?;
        }
        return Ok(());
    }
    let (Some(di), Some(do_)) = (di, do_) else {
        let k = if isl.is_some() { "osl" } else { "isl" };
        return Err(owner.err(
            k,
            "missing: a mixture of lengths maps to --seq-dist, which needs both ISL and OSL",
        ));
    };
    let parts = |d: Dist| match d {
        Dist::Normal { mean, stddev } => vec![(1.0, mean, stddev)],
        Dist::Mixture(v) => v,
    };
    let mut pairs = Vec::new();
    for (wi, mi, si) in parts(di) {
        for &(wo, mo, so) in &parts(do_.clone()) {
            pairs.push(SeqEntry {
                isl: whole(owner, "isl", mi)?,
                isl_stddev: si,
                osl: whole(owner, "osl", mo)?,
                osl_stddev: so,
                percent: wi * wo * 100.0,
            });
        }
    }
    out.extend(["--seq-dist".into(), seq_dist_text(&pairs)]);
    Ok(())
}

struct SeqEntry {
    isl: u64,
    isl_stddev: f64,
    osl: u64,
    osl_stddev: f64,
    percent: f64,
}

/// `--seq-dist`'s semicolon form, `ISL|sd,OSL|sd:percent;…`.
fn seq_dist_text(pairs: &[SeqEntry]) -> String {
    let len = |m: u64, sd: f64| {
        if sd > 0.0 {
            format!("{m}|{}", fmt_num(sd))
        } else {
            m.to_string()
        }
    };
    pairs
        .iter()
        .map(|p| {
            format!(
                "{},{}:{}",
                len(p.isl, p.isl_stddev),
                len(p.osl, p.osl_stddev),
                fmt_num(p.percent)
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// `prompts.sequenceDistribution: [{isl, osl, probability, islStddev?, oslStddev?}]` →
/// `--seq-dist` (AIPerf's percentages, which must sum to 100).
fn sequence_distribution(p: &Part<'_>, v: &Value, out: &mut Vec<String>) -> Result<(), String> {
    let at = p.path("sequenceDistribution");
    let Some(items) = v.as_array() else {
        return Err(p.refuse("sequenceDistribution", v));
    };
    let mut pairs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut e = Part::new(p.file, &format!("{at}[{i}]"), item)?;
        let isl = e.take("isl").ok_or_else(|| e.err("isl", "missing"))?;
        let osl = e.take("osl").ok_or_else(|| e.err("osl", "missing"))?;
        let (mi, mut si) = entry_len(&e, "isl", &isl)?;
        let (mo, mut so) = entry_len(&e, "osl", &osl)?;
        if let Some(s) = e.num("islStddev")? {
            si = s;
        }
        if let Some(s) = e.num("oslStddev")? {
            so = s;
        }
        let percent = e
            .num("probability")?
            .ok_or_else(|| e.err("probability", "missing"))?;
        let (isl, osl) = (whole(&e, "isl", mi)?, whole(&e, "osl", mo)?);
        e.done()?;
        pairs.push(SeqEntry {
            isl,
            isl_stddev: si,
            osl,
            osl_stddev: so,
            percent,
        });
    }
    out.extend(["--seq-dist".into(), seq_dist_text(&pairs)]);
    Ok(())
}

fn entry_len(e: &Part<'_>, k: &str, v: &Value) -> Result<(f64, f64), String> {
    match dist(e, k, v)? {
        Dist::Normal { mean, stddev } => Ok((mean, stddev)),
        Dist::Mixture(_) => Err(e.refuse_why(
            k,
            v,
            "a mixture inside a sequence-distribution entry has no inferbench flag",
        )),
    }
}
