//! `--isl-dist` / `--osl-dist`: a length distribution in the shapes AIPerf's YAML config
//! gives (`prompts.isl`, `prompts.osl`), written as JSON. The forms, each an object that may
//! also carry `min` and `max` (inclusive clamps, applied after the draw) and an optional
//! `type` marker:
//! - fixed: a number, or `{"value": v}`;
//! - normal: `{"mean": m, "stddev": s}` (stddev 0 or absent: the mean itself);
//! - log-normal: `{"mean": m, "median": d}` with 0 < d ≤ m: σ = √(2·ln(m/d)), μ = ln d,
//!   draw exp(μ + σ·z); its mean is m and its median d (d = m: always m);
//! - mixture: `{"peaks": [{…, "weight": w}, …]}`, two or more of the forms above (a peak may
//!   also be `{"distribution": {…}, "weight": w}`), weights relative (default 1);
//! - empirical: `{"points": [{"value": v, "weight": w}, …]}`.
//!
//! A draw is rounded to the nearest whole token and is at least 1 (as `--isl`'s normal
//! draws are). docs/workload.md has the rules.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::{Map, Value};

use crate::synthetic::sample_positive_normal_integer;

/// One node of a distribution, with its clamps.
#[derive(Clone, Debug, PartialEq)]
pub struct LengthShape {
    kind: Kind,
    min: Option<f64>,
    max: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Fixed(f64),
    Normal {
        mean: f64,
        stddev: f64,
    },
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// (weight as a fraction of 1, component)
    Mixture(Vec<(f64, LengthShape)>),
    /// (weight as a fraction of 1, value)
    Empirical(Vec<(f64, f64)>),
}

const FORM_KEYS: &[&str] = &["value", "mean", "stddev", "median", "peaks", "points"];

impl LengthShape {
    /// Parses the JSON text of `flag` (`--isl-dist`); errors name the flag and the field.
    pub fn parse(flag: &str, text: &str) -> Result<LengthShape, String> {
        let v: Value = serde_json::from_str(text.trim())
            .map_err(|e| format!("{flag}: not JSON ({e}): {text:?}"))?;
        Self::from_value(flag, &v)
    }

    /// Reads the distribution at `at` (a flag, or a config path) from parsed JSON or YAML.
    pub fn from_value(at: &str, v: &Value) -> Result<LengthShape, String> {
        match v {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                check_len(at, x)?;
                Ok(LengthShape {
                    kind: Kind::Fixed(x),
                    min: None,
                    max: None,
                })
            }
            Value::Object(m) => object(at, m),
            other => Err(format!(
                "{at}: a length distribution is a number or an object, got {other}"
            )),
        }
    }

    /// Whether `v` needs this general form, which `--isl`/`--isl-stddev` and `--seq-dist`
    /// cannot say: a log-normal or a clamp anywhere, or a peak that is itself a mixture (a
    /// nested `distribution`, `peaks` or `points`). Plain normals, peaks of normals and
    /// top-level `points` map to those flags.
    pub fn needs_general(v: &Value) -> bool {
        let Value::Object(m) = v else {
            return false;
        };
        let nested = |p: &Value| {
            p.get("distribution").is_some() || p.get("peaks").is_some() || p.get("points").is_some()
        };
        m.contains_key("median")
            || m.contains_key("min")
            || m.contains_key("max")
            || m.get("peaks")
                .and_then(Value::as_array)
                .is_some_and(|p| p.iter().any(|p| nested(p) || Self::needs_general(p)))
    }

    /// One length: drawn, clamped, rounded to a whole token, at least 1.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let x = self.draw(rng);
        if x.is_finite() {
            x.round().max(1.0) as u64
        } else {
            1
        }
    }

    /// The unrounded draw, clamped by this node's bounds.
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = match &self.kind {
            Kind::Fixed(x) => *x,
            // AIPerf's normal: rounded, at least 1 (a zero stddev is the mean itself).
            Kind::Normal { mean, stddev } => {
                sample_positive_normal_integer(rng, *mean, *stddev) as f64
            }
            Kind::LogNormal { mu, sigma } => {
                if *sigma == 0.0 {
                    mu.exp()
                } else {
                    let z: f64 = StandardNormal.sample(rng);
                    (mu + sigma * z).exp()
                }
            }
            Kind::Mixture(parts) => pick(rng, parts).draw(rng),
            Kind::Empirical(points) => *pick(rng, points),
        };
        let x = self.min.map_or(x, |lo| x.max(lo));
        self.max.map_or(x, |hi| x.min(hi))
    }
}

/// The item chosen by one uniform draw against cumulative weights (fractions summing to 1);
/// rounding leaves the last item for a draw past the sum.
fn pick<'a, R: Rng + ?Sized, T>(rng: &mut R, items: &'a [(f64, T)]) -> &'a T {
    let u: f64 = rng.random();
    let mut cum = 0.0;
    for (w, t) in items {
        cum += w;
        if u < cum {
            return t;
        }
    }
    &items[items.len() - 1].1
}

fn check_len(at: &str, x: f64) -> Result<(), String> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(format!("{at}: {x}: a length is a finite number ≥ 0"))
    }
}

fn num(at: &str, m: &Map<String, Value>, k: &str) -> Result<Option<f64>, String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            check_len(&format!("{at}.{k}"), x)?;
            Ok(Some(x))
        }
        Some(other) => Err(format!("{at}.{k}: {other}: not a number")),
    }
}

fn object(at: &str, m: &Map<String, Value>) -> Result<LengthShape, String> {
    for k in m.keys() {
        if !(FORM_KEYS.contains(&k.as_str()) || ["min", "max", "type"].contains(&k.as_str())) {
            return Err(format!(
                "{at}.{k}: not a field of a length distribution (value, mean, stddev, median, peaks, points, min, max, type)"
            ));
        }
    }
    let (min, max) = (num(at, m, "min")?, num(at, m, "max")?);
    if let (Some(lo), Some(hi)) = (min, max)
        && lo > hi
    {
        return Err(format!("{at}.min: {lo} is above max {hi}"));
    }
    let has = |k: &str| m.contains_key(k);
    let kind = if has("peaks") {
        only(at, m, "peaks", &[])?;
        mixture(at, m.get("peaks").unwrap_or(&Value::Null))?
    } else if has("points") {
        only(at, m, "points", &[])?;
        empirical(at, m.get("points").unwrap_or(&Value::Null))?
    } else if has("median") {
        only(at, m, "median", &["mean"])?;
        let mean = num(at, m, "mean")?
            .ok_or_else(|| format!("{at}.mean: missing (a log-normal gives mean and median)"))?;
        let median = num(at, m, "median")?.unwrap_or(0.0);
        if median <= 0.0 || mean <= 0.0 {
            return Err(format!(
                "{at}.median: a log-normal's mean and median are > 0 (mean {mean}, median {median})"
            ));
        }
        if median > mean {
            return Err(format!(
                "{at}.median: {median} is above the mean {mean}: a log-normal's median is ≤ its mean"
            ));
        }
        Kind::LogNormal {
            mu: median.ln(),
            sigma: (2.0 * (mean / median).ln()).sqrt(),
        }
    } else if has("mean") {
        only(at, m, "mean", &["stddev"])?;
        Kind::Normal {
            mean: num(at, m, "mean")?.unwrap_or(0.0),
            stddev: num(at, m, "stddev")?.unwrap_or(0.0),
        }
    } else if has("value") {
        only(at, m, "value", &[])?;
        Kind::Fixed(num(at, m, "value")?.unwrap_or(0.0))
    } else {
        return Err(format!(
            "{at}: missing: one of value, mean (with stddev or median), peaks or points"
        ));
    };
    if let Some(t) = m.get("type") {
        let want = match kind {
            Kind::Fixed(_) => "fixed",
            Kind::Normal { .. } => "normal",
            Kind::LogNormal { .. } => "lognormal",
            Kind::Mixture(_) => "multimodal",
            Kind::Empirical(_) => "empirical",
        };
        if t.as_str() != Some(want) {
            return Err(format!(
                "{at}.type: {t} does not match the fields given (they make a {want})"
            ));
        }
    }
    Ok(LengthShape { kind, min, max })
}

/// The form's own key `k` may come with `extra` keys only (besides min, max, type).
fn only(at: &str, m: &Map<String, Value>, k: &str, extra: &[&str]) -> Result<(), String> {
    for other in FORM_KEYS {
        if *other != k && !extra.contains(other) && m.contains_key(*other) {
            return Err(format!("{at}.{other}: cannot be given with {k}"));
        }
    }
    Ok(())
}

fn weights<T>(at: &str, items: Vec<(f64, T)>) -> Result<Vec<(f64, T)>, String> {
    let total: f64 = items.iter().map(|x| x.0).sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(format!("{at}: the weights must have a positive sum"));
    }
    Ok(items.into_iter().map(|(w, t)| (w / total, t)).collect())
}

fn weight(at: &str, m: &Map<String, Value>) -> Result<f64, String> {
    Ok(num(at, m, "weight")?.unwrap_or(1.0))
}

fn mixture(at: &str, v: &Value) -> Result<Kind, String> {
    let Some(items) = v.as_array().filter(|a| a.len() >= 2) else {
        return Err(format!("{at}.peaks: a list of two or more peaks"));
    };
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}.peaks[{i}]");
        let Value::Object(m) = item else {
            return Err(format!("{here}: a peak is an object"));
        };
        let w = weight(&here, m)?;
        let mut rest = m.clone();
        rest.remove("weight");
        let shape = match rest.remove("distribution") {
            Some(inner) if rest.is_empty() => {
                LengthShape::from_value(&format!("{here}.distribution"), &inner)?
            }
            Some(_) => {
                return Err(format!(
                    "{here}.distribution: give the peak's fields inline or under distribution, not both"
                ));
            }
            None => object(&here, &rest)?,
        };
        parts.push((w, shape));
    }
    Ok(Kind::Mixture(weights(&format!("{at}.peaks"), parts)?))
}

fn empirical(at: &str, v: &Value) -> Result<Kind, String> {
    let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
        return Err(format!("{at}.points: a list of one or more points"));
    };
    let mut points = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}.points[{i}]");
        let Value::Object(m) = item else {
            return Err(format!("{here}: a point is an object {{value, weight}}"));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !["value", "weight"].contains(&k.as_str()))
        {
            return Err(format!("{here}.{k}: a point has value and weight only"));
        }
        let value = num(&here, m, "value")?.ok_or_else(|| format!("{here}.value: missing"))?;
        points.push((weight(&here, m)?, value));
    }
    Ok(Kind::Empirical(weights(&format!("{at}.points"), points)?))
}

#[cfg(test)]
#[path = "length_shape_tests.rs"]
mod tests;
