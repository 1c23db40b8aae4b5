//! The Prometheus text exposition format (0.0.4), and OpenMetrics 1.0 when a target sends
//! it anyway, with the quirks real targets emit (docs/telemetry.md, "Parsing").
//!
//! Hand-written (no regex): one pass over the lines, byte cursors within a line, one
//! allocation per name and label (a 94 KB vLLM-shaped body: ~6 ms in a debug build).
//!
//! - **Grouping.** A sample joins the family of its exact name if one exists (declared, or
//!   met before); else a *declared* family whose type owns the name's suffix (histogram:
//!   `_bucket` `_sum` `_count` `_created` `_gcount` `_gsum`; gauge histogram: `_bucket`
//!   `_gcount` `_gsum`; summary: `_sum` `_count` `_created`; counter: `_total` `_created`;
//!   info: `_info`); else, in OpenMetrics, the same two steps with `:` read as `_` on both
//!   sides; else it starts an untyped family of its own. A type is never inferred from a
//!   suffix, and Python's separate `x_created` gauge families stay separate.
//! - **OpenMetrics** when the content type says `application/openmetrics-text` or the body
//!   ends with `# EOF`: `# EOF` is then required and must be last, timestamps are float
//!   seconds (converted to ms), exemplars after ` # ` are skipped, `# UNIT` is read, and an
//!   empty HELP or UNIT is absent.
//! - **Lenient** where real targets differ and nothing is lost: escapes other than `\\`,
//!   `\"`, `\n` stay literal, a family whose lines are interrupted is rejoined, HELP may
//!   come anywhere, a repeated series keeps its last value. Histogram shape (`le`, `+Inf`)
//!   is the window analysis's to check, not the parser's.
//! - **Errors** name the 1-based line: a value or timestamp that is not a number, an
//!   unterminated label set or value, a repeated label, a second HELP/TYPE/UNIT, a TYPE after
//!   its family's samples, an unknown type word, a JSON body (line 1).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::{Deserialize, Serialize};

mod line;
#[cfg(test)]
mod tests;

use line::{Cursor, SampleLine};

/// A family's declared type. No TYPE line means `Untyped`; the type is trusted as declared,
/// never inferred from a name's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
    /// OpenMetrics only.
    GaugeHistogram,
    Info,
    StateSet,
    Unknown,
}

/// Which text format a body was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Text004,
    OpenMetrics,
}

/// One sample line. `name` is the sample's own name (`x_bucket`, `x_sum`, `x_count` for a
/// histogram `x`); `labels` are sorted by label name, values unescaped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    /// The line's own timestamp, ms since the epoch (OpenMetrics seconds are converted).
    pub timestamp_ms: Option<i64>,
}

/// One metric family: its metadata and its samples in body order (a repeated
/// (name, labels) keeps the last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Family {
    pub name: String,
    pub kind: MetricType,
    pub help: Option<String>,
    /// OpenMetrics `# UNIT`.
    pub unit: Option<String>,
    pub samples: Vec<Sample>,
}

/// A parsed body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exposition {
    pub format: Format,
    pub families: Vec<Family>,
}

impl Exposition {
    pub fn family(&self, name: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// Why a body is not Prometheus text: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

fn error(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// Parses a body. `content_type` is the response's header when known (it selects
/// OpenMetrics; absent or anything else means 0.0.4, with OpenMetrics still recognised by
/// its `# EOF`).
pub fn parse(text: &str, content_type: Option<&str>) -> Result<Exposition, ParseError> {
    // A UTF-8 byte-order mark is not part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if looks_like_json(text) {
        return Err(error(
            1,
            "the body is JSON, not Prometheus text (TensorRT-LLM's /metrics serves iteration \
             stats as JSON; its Prometheus metrics are at /prometheus/metrics)",
        ));
    }
    let om = content_type.is_some_and(is_openmetrics_type) || ends_with_eof(text);
    let mut b = Builder::new(om);
    let mut eof_line = None;
    let mut last_line = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let no = i + 1;
        let line = raw.trim_matches([' ', '\t', '\r']);
        if line.is_empty() {
            continue;
        }
        last_line = no;
        if let Some(at) = eof_line {
            return Err(error(no, format!("text after `# EOF` (line {at})")));
        }
        if line.starts_with('#') {
            if b.comment(line, no)? {
                eof_line = Some(no);
            }
        } else {
            b.sample(line, no)?;
        }
    }
    if om && eof_line.is_none() {
        return Err(error(
            last_line.max(1),
            "an OpenMetrics body must end with `# EOF` (truncated?)",
        ));
    }
    Ok(Exposition {
        format: if om {
            Format::OpenMetrics
        } else {
            Format::Text004
        },
        families: b.families,
    })
}

fn is_openmetrics_type(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/openmetrics-text")
}

fn ends_with_eof(text: &str) -> bool {
    let body = text.trim_end_matches([' ', '\t', '\r', '\n']);
    let last = body.rsplit('\n').next().unwrap_or("");
    last.trim_matches([' ', '\t', '\r']) == "# EOF"
}

/// No Prometheus line starts with `[`; one may start with `{` (a quoted metric name), so an
/// object only counts as JSON when it parses as JSON.
fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('[')
        || (t.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok())
}

/// The sample-name suffixes a family of each type owns (OpenMetrics names a counter family
/// `x` and its sample `x_total`; 0.0.4 names both `x_total`, which the exact match covers).
fn owns(kind: MetricType, suffix: &str) -> bool {
    match kind {
        // `_gcount`/`_gsum` belong to gauge histograms; a histogram may own them too, as no
        // other family could.
        MetricType::Histogram => matches!(
            suffix,
            "_bucket" | "_sum" | "_count" | "_created" | "_gcount" | "_gsum"
        ),
        MetricType::GaugeHistogram => matches!(suffix, "_bucket" | "_gcount" | "_gsum"),
        MetricType::Summary => matches!(suffix, "_sum" | "_count" | "_created"),
        MetricType::Counter => matches!(suffix, "_total" | "_created"),
        MetricType::Info => suffix == "_info",
        MetricType::Gauge | MetricType::Untyped | MetricType::StateSet | MetricType::Unknown => {
            false
        }
    }
}

const SUFFIXES: [&str; 8] = [
    "_bucket", "_sum", "_count", "_created", "_gcount", "_gsum", "_total", "_info",
];

fn type_word(word: &str) -> Option<MetricType> {
    Some(match word {
        "counter" => MetricType::Counter,
        "gauge" => MetricType::Gauge,
        "histogram" => MetricType::Histogram,
        "summary" => MetricType::Summary,
        "untyped" => MetricType::Untyped,
        "gaugehistogram" => MetricType::GaugeHistogram,
        "info" => MetricType::Info,
        "stateset" => MetricType::StateSet,
        "unknown" => MetricType::Unknown,
        _ => return None,
    })
}

/// prometheus_client in OpenMetrics mode escapes `:` to `_` in sample names only.
fn normalise(name: &str) -> String {
    name.replace(':', "_")
}

#[derive(Default, Clone, Copy)]
struct Meta {
    typed: bool,
    helped: bool,
    united: bool,
}

struct Builder {
    om: bool,
    families: Vec<Family>,
    meta: Vec<Meta>,
    by_name: HashMap<String, usize>,
    /// OpenMetrics only: families by their `:`→`_` normalised name.
    by_norm: HashMap<String, usize>,
    /// (sample name, labels) hash → (family, sample index), for "a repeat keeps the last".
    seen: HashMap<u64, (usize, usize)>,
}

impl Builder {
    fn new(om: bool) -> Builder {
        Builder {
            om,
            families: Vec::new(),
            meta: Vec::new(),
            by_name: HashMap::new(),
            by_norm: HashMap::new(),
            seen: HashMap::new(),
        }
    }

    fn create(&mut self, name: &str) -> usize {
        let idx = self.families.len();
        self.families.push(Family {
            name: name.to_string(),
            kind: MetricType::Untyped,
            help: None,
            unit: None,
            samples: Vec::new(),
        });
        self.meta.push(Meta::default());
        self.by_name.insert(name.to_string(), idx);
        if self.om {
            self.by_norm.entry(normalise(name)).or_insert(idx);
        }
        idx
    }

    fn named(&mut self, name: &str) -> usize {
        match self.by_name.get(name) {
            Some(&i) => i,
            None => self.create(name),
        }
    }

    /// A `#` line. Returns true for OpenMetrics's `# EOF`.
    fn comment(&mut self, line: &str, no: usize) -> Result<bool, ParseError> {
        let mut c = Cursor::new(&line[1..], no);
        c.skip_blank();
        let keyword = c.token();
        match keyword {
            "HELP" => self.help(&mut c)?,
            "TYPE" => self.declare(&mut c)?,
            "UNIT" if self.om => self.unit(&mut c)?,
            "EOF" if self.om && c.rest().is_empty() => return Ok(true),
            _ => {}
        }
        Ok(false)
    }

    fn help(&mut self, c: &mut Cursor) -> Result<(), ParseError> {
        let name = c.meta_name("HELP")?;
        c.skip_blank();
        let doc = line::unescape_help(c.rest(), self.om);
        let idx = self.named(&name);
        if self.meta[idx].helped {
            return Err(c.err(format!("a second HELP line for `{name}`")));
        }
        self.meta[idx].helped = true;
        // OpenMetrics: an empty HELP counts as absent.
        self.families[idx].help = if doc.is_empty() && self.om {
            None
        } else {
            Some(doc)
        };
        Ok(())
    }

    fn unit(&mut self, c: &mut Cursor) -> Result<(), ParseError> {
        let name = c.meta_name("UNIT")?;
        c.skip_blank();
        let unit = c.rest();
        let idx = self.named(&name);
        if self.meta[idx].united {
            return Err(c.err(format!("a second UNIT line for `{name}`")));
        }
        self.meta[idx].united = true;
        self.families[idx].unit = (!unit.is_empty()).then(|| unit.to_string());
        Ok(())
    }

    fn declare(&mut self, c: &mut Cursor) -> Result<(), ParseError> {
        let name = c.meta_name("TYPE")?;
        c.skip_blank();
        let word = c.token();
        if word.is_empty() {
            return Err(c.err(format!("the TYPE line for `{name}` names no type")));
        }
        let Some(kind) = type_word(word) else {
            return Err(c.err(format!("unknown metric type `{word}` for `{name}`")));
        };
        c.skip_blank();
        if !c.rest().is_empty() {
            return Err(c.err(format!(
                "unexpected text `{}` after the TYPE line for `{name}`",
                c.rest()
            )));
        }
        let idx = self.named(&name);
        if self.meta[idx].typed {
            return Err(c.err(format!("a second TYPE line for `{name}`")));
        }
        let before = |b: &Builder, n: &str| {
            b.by_name
                .get(n)
                .is_some_and(|&j| !b.meta[j].typed && !b.families[j].samples.is_empty())
        };
        let late = !self.families[idx].samples.is_empty()
            || SUFFIXES
                .iter()
                .any(|s| owns(kind, s) && before(self, &format!("{name}{s}")));
        if late {
            return Err(c.err(format!(
                "the TYPE line for `{name}` comes after its samples"
            )));
        }
        self.families[idx].kind = kind;
        self.meta[idx].typed = true;
        Ok(())
    }

    /// The family a sample name belongs to: an existing family of that exact name, else a
    /// declared family that owns the name's suffix, else (OpenMetrics) the same after
    /// normalising `:`, else a new untyped family of its own.
    fn resolve(&mut self, name: &str) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        if let Some(i) = self.owner(name, false) {
            return i;
        }
        if self.om {
            let norm = normalise(name);
            if let Some(&i) = self.by_norm.get(&norm) {
                return i;
            }
            if let Some(i) = self.owner(&norm, true) {
                return i;
            }
        }
        self.create(name)
    }

    fn owner(&self, name: &str, norm: bool) -> Option<usize> {
        let map = if norm { &self.by_norm } else { &self.by_name };
        SUFFIXES.iter().find_map(|s| {
            let base = name.strip_suffix(s)?;
            let &i = map.get(base)?;
            (self.meta[i].typed && owns(self.families[i].kind, s)).then_some(i)
        })
    }

    fn sample(&mut self, line: &str, no: usize) -> Result<(), ParseError> {
        let SampleLine {
            name,
            labels,
            value,
            timestamp_ms,
        } = line::sample(line, no, self.om)?;
        let fam = self.resolve(&name);
        let mut h = DefaultHasher::new();
        (&name, &labels).hash(&mut h);
        let key = h.finish();
        let same = |s: &Sample| s.name == name && s.labels == labels;
        let existing = match self.seen.get(&key) {
            Some(&(f, i)) if same(&self.families[f].samples[i]) => Some((f, i)),
            // A hash collision: fall back to a scan of the family.
            Some(_) => self.families[fam]
                .samples
                .iter()
                .position(same)
                .map(|i| (fam, i)),
            None => None,
        };
        if let Some((f, i)) = existing {
            let s = &mut self.families[f].samples[i];
            s.value = value;
            s.timestamp_ms = timestamp_ms;
            return Ok(());
        }
        let samples = &mut self.families[fam].samples;
        self.seen.entry(key).or_insert((fam, samples.len()));
        samples.push(Sample {
            name,
            labels,
            value,
            timestamp_ms,
        });
        Ok(())
    }
}
