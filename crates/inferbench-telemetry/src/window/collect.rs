//! Gathering one target's parsed scrapes into per-series value tracks, so that only values
//! (not bodies) are held across the run.

use std::collections::{BTreeMap, HashMap};

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

/// Where a sample's value goes: which series, and which of its tracks.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Value(usize),
    Created(usize),
    Bucket(usize, usize),
    Count(usize),
    Sum(usize),
    Other(usize),
    /// A histogram sample that is none of the above, or a bucket without a numeric `le`.
    Ignored,
}

#[derive(Debug)]
pub(crate) struct FamilyData {
    pub kind: MetricType,
    pub help: Option<String>,
    /// Series in first-seen order.
    pub series: Vec<SeriesData>,
    /// The series by labels (sorted): the output order.
    pub order: BTreeMap<Labels, usize>,
    /// Each (sample name, labels) seen, resolved once: bodies repeat their samples scrape
    /// after scrape, so the steady state looks up without allocating.
    slots: HashMap<String, HashMap<Labels, Slot>>,
}

impl FamilyData {
    pub fn get(&self, labels: &[(String, String)]) -> Option<&SeriesData> {
        self.order.get(labels).map(|&i| &self.series[i])
    }

    /// The series of these labels, created when new.
    fn series_of(&mut self, labels: Labels) -> usize {
        let n = self.series.len();
        let i = *self.order.entry(labels).or_insert(n);
        if i == n {
            self.series.push(SeriesData::default());
        }
        i
    }

    /// Resolves a sample seen for the first time.
    fn resolve(
        &mut self,
        suffix: &str,
        labels: &[(String, String)],
        warnings: &mut Vec<String>,
        name: &str,
    ) -> Slot {
        match shape(self.kind) {
            Shape::Counter if suffix == "_created" => {
                Slot::Created(self.series_of(labels.to_vec()))
            }
            Shape::Counter | Shape::Gauge => Slot::Value(self.series_of(labels.to_vec())),
            Shape::Other => {
                let l = labels
                    .iter()
                    .filter(|(k, _)| k != "quantile" && k != "le")
                    .cloned()
                    .collect();
                Slot::Other(self.series_of(l))
            }
            Shape::Histogram => {
                let mut l = labels.to_vec();
                let le = l.iter().position(|(k, _)| k == "le").map(|i| l.remove(i).1);
                let i = self.series_of(l);
                match (suffix, le) {
                    ("_bucket", Some(le)) => match parse_le(&le) {
                        Some(b) => {
                            let buckets = &mut self.series[i].buckets;
                            let j = buckets.iter().position(|x| x.0 == b).unwrap_or_else(|| {
                                buckets.push((b, Vec::new()));
                                buckets.len() - 1
                            });
                            Slot::Bucket(i, j)
                        }
                        None => {
                            warnings.push(format!(
                                "{name}: bucket bound le=\"{le}\" is not a number; left out"
                            ));
                            Slot::Ignored
                        }
                    },
                    ("_count", _) => Slot::Count(i),
                    ("_sum", _) => Slot::Sum(i),
                    ("_created", _) => Slot::Created(i),
                    _ => Slot::Ignored,
                }
            }
        }
    }
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
            if !self.families.contains_key(fam.name.as_str()) {
                let data = FamilyData {
                    kind: fam.kind,
                    help: fam.help.clone(),
                    series: Vec::new(),
                    order: BTreeMap::new(),
                    slots: HashMap::new(),
                };
                self.families.insert(fam.name.clone(), data);
            }
            let data = self
                .families
                .get_mut(fam.name.as_str())
                .expect("inserted above");
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
            for smp in &fam.samples {
                if smp.timestamp_ms.is_some() && !self.own_timestamps {
                    self.own_timestamps = true;
                    self.warnings.push(format!(
                        "{} carries its own exposition timestamp: sample times stay the scrape's first byte",
                        smp.name
                    ));
                }
                let known = data
                    .slots
                    .get(smp.name.as_str())
                    .and_then(|m| m.get(smp.labels.as_slice()))
                    .copied();
                let slot = match known {
                    Some(slot) => slot,
                    None => {
                        let suffix = suffix(&fam.name, &smp.name);
                        let slot = data.resolve(suffix, &smp.labels, &mut self.warnings, &smp.name);
                        data.slots
                            .entry(smp.name.clone())
                            .or_default()
                            .insert(smp.labels.clone(), slot);
                        slot
                    }
                };
                let v = smp.value;
                let series = &mut data.series;
                match slot {
                    Slot::Value(i) => put(&mut series[i].values, at, v),
                    Slot::Created(i) => put(&mut series[i].created, at, v),
                    Slot::Bucket(i, j) => put(&mut series[i].buckets[j].1, at, v),
                    Slot::Count(i) => put(&mut series[i].count, at, v),
                    Slot::Sum(i) => put(&mut series[i].sum, at, v),
                    Slot::Other(i) => series[i].other_samples += 1,
                    Slot::Ignored => {}
                }
            }
        }
    }

    /// The sample time of usable scrape `at`.
    pub fn t(&self, at: usize) -> u64 {
        self.usable[at].1
    }
}
