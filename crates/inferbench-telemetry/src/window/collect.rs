//! Gathering one target's parsed scrapes into per-series value tracks, so that only values
//! (not bodies) are held across the run.

use std::collections::BTreeMap;

use crate::expo::{Exposition, MetricType};

/// A series' values by usable-scrape index, in scrape order.
pub(crate) type Track = Vec<(usize, f64)>;

pub(crate) type Labels = Vec<(String, String)>;

/// How a family's samples are summarised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Counter,
    /// Gauges, and untyped/unknown families (treated as gauges).
    Gauge,
    Histogram,
    Other,
}

pub(crate) fn shape(kind: MetricType) -> Shape {
    match kind {
        MetricType::Counter => Shape::Counter,
        MetricType::Gauge | MetricType::Untyped | MetricType::Unknown => Shape::Gauge,
        MetricType::Histogram => Shape::Histogram,
        MetricType::Summary
        | MetricType::GaugeHistogram
        | MetricType::Info
        | MetricType::StateSet => Shape::Other,
    }
}

#[derive(Debug, Default)]
pub(crate) struct SeriesData {
    /// Counter and gauge values.
    pub values: Track,
    /// OpenMetrics `_created` samples of this series.
    pub created: Track,
    /// Histogram buckets by bound, in first-seen order.
    pub buckets: Vec<(f64, Track)>,
    pub count: Track,
    pub sum: Track,
    /// Samples of a family that is not summarised.
    pub other_samples: u64,
}

#[derive(Debug)]
pub(crate) struct FamilyData {
    pub kind: MetricType,
    pub help: Option<String>,
    pub series: BTreeMap<Labels, SeriesData>,
}

/// One target's usable scrapes and every series seen in them.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// (seq, sample time ns) of each usable scrape, in file order.
    pub usable: Vec<(u64, u64)>,
    pub families: BTreeMap<String, FamilyData>,
    pub warnings: Vec<String>,
    own_timestamps: bool,
    kind_clash: bool,
}

/// Appends a value at scrape `at`; a repeated key inside one body keeps the last.
fn put(track: &mut Track, at: usize, v: f64) {
    match track.last_mut() {
        Some(last) if last.0 == at => last.1 = v,
        _ => track.push((at, v)),
    }
}

/// What a sample's name adds to its family's (`_bucket`, `_created`, ...), reading `:` and `_`
/// as one: OpenMetrics renders a `vllm:x` family's samples as `vllm_x_total`.
fn suffix<'s>(family: &str, sample: &'s str) -> &'s str {
    let (f, s) = (family.as_bytes(), sample.as_bytes());
    let same = |a: u8, b: u8| a == b || (a == b':' && b == b'_') || (a == b'_' && b == b':');
    if s.len() >= f.len() && f.iter().zip(s).all(|(&a, &b)| same(a, b)) {
        &sample[f.len()..]
    } else {
        ""
    }
}

fn parse_le(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        _ => s.parse().ok(),
    }
}

impl Collected {
    /// Adds one usable scrape's parsed body, sampled at `t_ns`.
    pub fn push(&mut self, seq: u64, t_ns: u64, expo: &Exposition) {
        let at = self.usable.len();
        self.usable.push((seq, t_ns));
        for fam in &expo.families {
            let data = self
                .families
                .entry(fam.name.clone())
                .or_insert_with(|| FamilyData {
                    kind: fam.kind,
                    help: fam.help.clone(),
                    series: BTreeMap::new(),
                });
            if data.kind != fam.kind {
                if !self.kind_clash {
                    self.kind_clash = true;
                    self.warnings.push(format!(
                        "family {} changed type from {:?} to {:?} at scrape {seq}: the later samples are left out",
                        fam.name, data.kind, fam.kind
                    ));
                }
                continue;
            }
            let sh = shape(fam.kind);
            for s in &fam.samples {
                if s.timestamp_ms.is_some() && !self.own_timestamps {
                    self.own_timestamps = true;
                    self.warnings.push(format!(
                        "{} carries its own exposition timestamp: sample times stay the scrape's first byte",
                        s.name
                    ));
                }
                let suffix = suffix(&fam.name, &s.name);
                match sh {
                    Shape::Counter => {
                        let entry = data.series.entry(s.labels.clone()).or_default();
                        if suffix == "_created" {
                            put(&mut entry.created, at, s.value);
                        } else {
                            put(&mut entry.values, at, s.value);
                        }
                    }
                    Shape::Gauge => {
                        let entry = data.series.entry(s.labels.clone()).or_default();
                        put(&mut entry.values, at, s.value);
                    }
                    Shape::Histogram => {
                        let mut labels = s.labels.clone();
                        let le = labels
                            .iter()
                            .position(|(k, _)| k == "le")
                            .map(|i| labels.remove(i).1);
                        let entry = data.series.entry(labels).or_default();
                        match (suffix, le) {
                            ("_bucket", Some(le)) => match parse_le(&le) {
                                Some(b) => {
                                    let i = match entry.buckets.iter().position(|x| x.0 == b) {
                                        Some(i) => i,
                                        None => {
                                            entry.buckets.push((b, Vec::new()));
                                            entry.buckets.len() - 1
                                        }
                                    };
                                    put(&mut entry.buckets[i].1, at, s.value);
                                }
                                None => self.warnings.push(format!(
                                    "{}: bucket bound le=\"{le}\" is not a number; left out",
                                    s.name
                                )),
                            },
                            ("_count", _) => put(&mut entry.count, at, s.value),
                            ("_sum", _) => put(&mut entry.sum, at, s.value),
                            ("_created", _) => put(&mut entry.created, at, s.value),
                            _ => {}
                        }
                    }
                    Shape::Other => {
                        let labels = s
                            .labels
                            .iter()
                            .filter(|(k, _)| k != "quantile" && k != "le")
                            .cloned()
                            .collect();
                        data.series.entry(labels).or_default().other_samples += 1;
                    }
                }
            }
        }
    }

    /// The sample time of usable scrape `at`.
    pub fn t(&self, at: usize) -> u64 {
        self.usable[at].1
    }
}
