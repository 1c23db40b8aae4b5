//! `--seq-dist` (a weighted mixture of ISL/OSL pairs) and `--random-range-ratio` (a uniform
//! window around the ISL/OSL means), parsed from the strings AIPerf accepts.

use rand::Rng;
use serde_json::Value;

use super::error::DatasetError;
use crate::synthetic::sample_positive_normal_integer;

/// One (ISL, OSL) pair of a mixture, with optional stddevs and its probability in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeqPair {
    pub isl: u64,
    pub isl_stddev: f64,
    pub osl: u64,
    pub osl_stddev: f64,
    /// Percent, 0–100.
    pub prob: f64,
}

/// A `--seq-dist` mixture. Probabilities are percentages that sum to 100.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqDist {
    pub pairs: Vec<SeqPair>,
}

fn bad(message: impl Into<String>) -> DatasetError {
    DatasetError::file("--seq-dist", message)
}

impl SeqDist {
    /// Parses the three forms AIPerf takes:
    /// - semicolon: `256,128:40;512|20,256|10:60`
    /// - bracket: `[(256,128):40,(512|20,256|10):60]`
    /// - JSON: `{"pairs":[{"isl":256,"isl_stddev":10,"osl":128,"osl_stddev":5,"prob":40},…]}`
    pub fn parse(s: &str) -> Result<SeqDist, DatasetError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(bad("empty distribution"));
        }
        let pairs = if s.starts_with('{') {
            parse_json(s)?
        } else if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            parse_bracket(inner)?
        } else {
            s.split(';')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(parse_semicolon_pair)
                .collect::<Result<Vec<_>, _>>()?
        };
        if pairs.is_empty() {
            return Err(bad(format!("no ISL,OSL:prob pairs in {s:?}")));
        }
        for p in &pairs {
            if p.isl == 0 || p.osl == 0 {
                return Err(bad(format!("lengths must be positive in {s:?}")));
            }
            if !(0.0..=100.0).contains(&p.prob) {
                return Err(bad(format!(
                    "probability {} is not a percentage in 0..=100",
                    p.prob
                )));
            }
        }
        let total: f64 = pairs.iter().map(|p| p.prob).sum();
        if (total - 100.0).abs() > 1e-6 {
            return Err(bad(format!(
                "probabilities are percentages and must sum to 100, got {total}"
            )));
        }
        Ok(SeqDist { pairs })
    }

    /// One (ISL, OSL) draw: a uniform number picks the pair by cumulative probability, then
    /// each length is drawn around the pair's mean when its stddev is > 0.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (u64, u64) {
        let u: f64 = rng.random();
        let mut cum = 0.0;
        let mut chosen = self.pairs[self.pairs.len() - 1];
        for p in &self.pairs {
            cum += p.prob / 100.0;
            if u < cum {
                chosen = *p;
                break;
            }
        }
        let isl = sample_positive_normal_integer(rng, chosen.isl as f64, chosen.isl_stddev);
        let osl = sample_positive_normal_integer(rng, chosen.osl as f64, chosen.osl_stddev);
        (isl, osl)
    }
}

/// `ISL[|std]` or `OSL[|std]`.
fn parse_len(s: &str, whole: &str) -> Result<(u64, f64), DatasetError> {
    let (m, sd) = match s.split_once('|') {
        Some((m, sd)) => (m.trim(), Some(sd.trim())),
        None => (s.trim(), None),
    };
    let mean: u64 = m
        .parse()
        .map_err(|_| bad(format!("{m:?} is not a whole token count in {whole:?}")))?;
    let sd = match sd {
        None => 0.0,
        Some(x) => match x.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => v,
            _ => return Err(bad(format!("{x:?} is not a stddev >= 0 in {whole:?}"))),
        },
    };
    Ok((mean, sd))
}

fn parse_prob(s: &str, whole: &str) -> Result<f64, DatasetError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(bad(format!("{s:?} is not a probability in {whole:?}"))),
    }
}

/// `ISL[|std],OSL[|std]:prob`.
fn parse_semicolon_pair(p: &str) -> Result<SeqPair, DatasetError> {
    let (lens, prob) = p
        .rsplit_once(':')
        .ok_or_else(|| bad(format!("{p:?} is not ISL,OSL:prob")))?;
    let (i, o) = lens
        .split_once(',')
        .ok_or_else(|| bad(format!("{p:?} is not ISL,OSL:prob")))?;
    let (isl, isl_stddev) = parse_len(i, p)?;
    let (osl, osl_stddev) = parse_len(o, p)?;
    Ok(SeqPair {
        isl,
        isl_stddev,
        osl,
        osl_stddev,
        prob: parse_prob(prob, p)?,
    })
}

/// `(ISL[|std],OSL[|std]):prob, …` (the text inside the brackets).
fn parse_bracket(inner: &str) -> Result<Vec<SeqPair>, DatasetError> {
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let open = rest
            .strip_prefix('(')
            .ok_or_else(|| bad(format!("expected '(' at {rest:?}")))?;
        let (lens, after) = open
            .split_once(')')
            .ok_or_else(|| bad(format!("missing ')' in {rest:?}")))?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| bad(format!("expected ':prob' after ({lens})")))?;
        let (prob, next) = match after.find(',') {
            Some(i) => (&after[..i], &after[i + 1..]),
            None => (after, ""),
        };
        let (i, o) = lens
            .split_once(',')
            .ok_or_else(|| bad(format!("({lens}) is not (ISL,OSL)")))?;
        let (isl, isl_stddev) = parse_len(i, lens)?;
        let (osl, osl_stddev) = parse_len(o, lens)?;
        out.push(SeqPair {
            isl,
            isl_stddev,
            osl,
            osl_stddev,
            prob: parse_prob(prob, inner)?,
        });
        rest = next.trim();
    }
    Ok(out)
}

fn parse_json(s: &str) -> Result<Vec<SeqPair>, DatasetError> {
    let v: Value = serde_json::from_str(s).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let pairs = v
        .get("pairs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("JSON form needs a \"pairs\" list"))?;
    pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let num = |k: &str| p.get(k).and_then(Value::as_f64);
            let need = |k: &str| num(k).ok_or_else(|| bad(format!("pairs[{i}] needs {k:?}")));
            let len = |k: &str| -> Result<u64, DatasetError> {
                let x = need(k)?;
                if x.is_finite() && x >= 0.0 && x.fract() == 0.0 {
                    Ok(x as u64)
                } else {
                    Err(bad(format!("pairs[{i}].{k} must be a whole token count")))
                }
            };
            Ok(SeqPair {
                isl: len("isl")?,
                isl_stddev: num("isl_stddev").unwrap_or(0.0).max(0.0),
                osl: len("osl")?,
                osl_stddev: num("osl_stddev").unwrap_or(0.0).max(0.0),
                prob: need("prob")?,
            })
        })
        .collect()
}

/// `--random-range-ratio`: lengths are drawn uniformly from a window around the means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RangeRatio {
    pub input: f64,
    pub output: f64,
}

impl RangeRatio {
    /// A number for both, or JSON `{"input": r, "output": r}` (a missing key is 0). Each ratio
    /// must lie in [0, 1].
    pub fn parse(s: &str) -> Result<RangeRatio, DatasetError> {
        let bad = |m: String| DatasetError::file("--random-range-ratio", m);
        let s = s.trim();
        let (input, output) = if s.starts_with('{') {
            let v: Value =
                serde_json::from_str(s).map_err(|e| bad(format!("not valid JSON: {e}")))?;
            let get = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            (get("input"), get("output"))
        } else {
            let r: f64 = s
                .parse()
                .map_err(|_| bad(format!("{s:?} is not a number or JSON")))?;
            (r, r)
        };
        for r in [input, output] {
            if !(r.is_finite() && (0.0..=1.0).contains(&r)) {
                return Err(bad(format!("ratio {r} is not in [0, 1]")));
            }
        }
        Ok(RangeRatio { input, output })
    }

    /// The inclusive window for mean `m`: vllm style `[floor(m(1-r)), ceil(m(1+r))]`, sglang
    /// style `[max(1, floor(m·r)), m]`; never below 1.
    pub fn window(mean: f64, r: f64, sglang: bool) -> (u64, u64) {
        let (lo, hi) = if sglang {
            ((mean * r).floor().max(1.0), mean.max(1.0))
        } else {
            ((mean * (1.0 - r)).floor(), (mean * (1.0 + r)).ceil())
        };
        let lo = lo.max(1.0) as u64;
        (lo, (hi as u64).max(lo))
    }

    pub fn draw<R: Rng + ?Sized>(rng: &mut R, mean: f64, r: f64, sglang: bool) -> u64 {
        let (lo, hi) = Self::window(mean, r, sglang);
        rng.random_range(lo..=hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::rng_for;

    fn pair(isl: u64, isl_stddev: f64, osl: u64, osl_stddev: f64, prob: f64) -> SeqPair {
        SeqPair {
            isl,
            isl_stddev,
            osl,
            osl_stddev,
            prob,
        }
    }

    #[test]
    fn three_forms_give_the_same_pairs() {
        let want = vec![
            pair(256, 10.0, 128, 5.0, 40.0),
            pair(512, 0.0, 256, 0.0, 60.0),
        ];
        for s in [
            "256|10,128|5:40;512,256:60",
            " 256|10 , 128|5 : 40 ; 512,256:60 ",
            "[(256|10,128|5):40,(512,256):60]",
            r#"{"pairs":[{"isl":256,"isl_stddev":10,"osl":128,"osl_stddev":5,"prob":40},{"isl":512,"osl":256,"prob":60}]}"#,
        ] {
            assert_eq!(SeqDist::parse(s).unwrap().pairs, want, "{s}");
        }
    }

    #[test]
    fn bad_distributions_are_refused() {
        for s in [
            "",
            "256,128:50",
            "256,128:0.4;512,256:0.6",
            "256:100",
            "abc,1:100",
            "0,5:100",
            "[(1,2):100",
            r#"{"x":1}"#,
        ] {
            let e = SeqDist::parse(s).unwrap_err();
            assert!(e.to_string().starts_with("--seq-dist: "), "{s}: {e}");
        }
    }

    #[test]
    fn sampling_follows_the_weights() {
        let d = SeqDist::parse("10,1:25;20,2:75").unwrap();
        let mut rng = rng_for(3, "t");
        let n = 40_000;
        let tens = (0..n).filter(|_| d.sample(&mut rng) == (10, 1)).count();
        // 25 % of 40,000 = 10,000; 4 sigma of a binomial is about 350.
        assert!((tens as i64 - 10_000).abs() < 350, "{tens}");
    }

    #[test]
    fn range_windows() {
        // vllm: m=100, r=0.5 → [50, 150]; sglang: [50, 100].
        assert_eq!(RangeRatio::window(100.0, 0.5, false), (50, 150));
        assert_eq!(RangeRatio::window(100.0, 0.5, true), (50, 100));
        // m=3, r=0.9 → floor(0.3)=0 is raised to 1; ceil(5.7)=6.
        assert_eq!(RangeRatio::window(3.0, 0.9, false), (1, 6));
        assert_eq!(RangeRatio::window(10.0, 0.0, false), (10, 10));
        assert_eq!(
            RangeRatio::parse("0.25").unwrap(),
            RangeRatio {
                input: 0.25,
                output: 0.25
            }
        );
        assert_eq!(
            RangeRatio::parse(r#"{"input":0.5}"#).unwrap(),
            RangeRatio {
                input: 0.5,
                output: 0.0
            }
        );
        assert!(RangeRatio::parse("1.5").is_err());
        let mut rng = rng_for(1, "t");
        for _ in 0..1000 {
            let x = RangeRatio::draw(&mut rng, 100.0, 0.5, false);
            assert!((50..=150).contains(&x));
        }
    }
}
