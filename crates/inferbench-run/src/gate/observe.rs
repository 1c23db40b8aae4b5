//! One pass over each run's evidence: the observations every rule reads (per-record metric
//! values, serialization checks, schedule data, the representative pairs), so that no rule
//! reads the evidence again.
//!
//! Our runs under `aiperf-0.13` are read a record at a time through [`Fold`] (the per-record
//! metrics are the fold's own); another set, or an import, is loaded whole and scored by
//! [`offline::score_set`].

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use inferbench_core::identity::Identity;
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{EventKind, EvidenceLine, Phase, PhaseWindow, Record, Summary};
use sha2::{Digest, Sha256};

use super::spec::{GateSpec, Requirement, RuleBody, TimingOrigin};
use crate::compare::load::{self, Source};
use crate::fold::Fold;
use crate::live::ClientResources;
use crate::{Failure, offline};

/// The per-request tags of the definition set for the achieved lengths.
pub const ISL: &str = "input_sequence_length";
pub const OSL: &str = "output_sequence_length";
/// Computed here from each record's planned send time, as `inferbench_metrics::schedule`
/// defines them (first / last content response − `planned_ns`).
pub const TTFT_FROM_PLANNED: &str = "time_to_first_token_from_planned";
pub const LATENCY_FROM_PLANNED: &str = "request_latency_from_planned";
/// The first **output** text (content or tool call, reasoning excluded) − `planned_ns`: the
/// planned-send twin of `time_to_first_output_token`.
pub const TTFO_FROM_PLANNED: &str = "time_to_first_output_token_from_planned";

/// One profiling record, reduced to what the rules read.
#[derive(Clone, Debug)]
pub struct RecordObs {
    pub id: u64,
    /// Failed or cancelled: never good, no latency.
    pub failed: bool,
    pub planned_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Values (display units) of [`Observations::tags`], in that order; `None` when the
    /// metric does not apply to the record.
    pub values: Vec<Option<f64>>,
}

/// How often a requirement was broken, and the first record (by id) that broke it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Violations {
    pub count: u64,
    pub checked: u64,
    pub first: Option<u64>,
}

/// A representative request/response pair for the verdict.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SamplePair {
    pub record: u64,
    pub payload_index: u64,
    pub status: Option<u16>,
    pub request_bytes: u64,
    pub events: BTreeMap<&'static str, u64>,
    pub first_event: Option<String>,
    pub last_event: Option<String>,
    /// `inferbench inspect`'s analysis of this record (`inferbench_metrics::adapter`): what
    /// would make tools disagree on it. Shown, not judged: the requirements judge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inspect_warnings: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inspect_notes: Vec<String>,
}

/// The run's tokenizer and `<think>` splitting, for the `inspect` analysis of the samples.
pub struct Inspector {
    pub tokenizer: std::sync::Arc<inferbench_workload::Tokenizer>,
    pub reasoning_tags: bool,
}

/// One run, observed.
pub struct RunObs {
    pub id: String,
    pub path: PathBuf,
    pub identity: Option<Identity>,
    pub summary: Summary,
    pub window: Option<PhaseWindow>,
    /// Profiling records in evidence order.
    pub records: Vec<RecordObs>,
    pub violations: BTreeMap<Requirement, Violations>,
    /// The first `inspect_sample` profiling records by id.
    pub samples: Vec<SamplePair>,
    pub client: Option<ClientResources>,
    /// Rate mode with a concurrency ceiling: the ceiling.
    pub rate_ceiling: Option<u64>,
    /// The plan's `--workers-max` (None: one worker; an import: not recorded).
    pub workers_max: Option<usize>,
}

impl RunObs {
    pub fn attempted(&self) -> u64 {
        self.records.len() as u64
    }
}

/// Every side's runs, observed under one set.
pub struct Observations {
    pub tags: Vec<String>,
    pub candidate: Vec<RunObs>,
    pub baseline: Vec<RunObs>,
}

impl Observations {
    pub fn tag_index(&self, tag: &str) -> Option<usize> {
        self.tags.iter().position(|t| t == tag)
    }
}

/// The per-request metric tags the spec's rules read.
pub fn needed_tags(spec: &GateSpec) -> Vec<String> {
    let mut tags: Vec<String> = vec![ISL.into(), OSL.into()];
    for r in &spec.rules {
        match &r.body {
            RuleBody::Latency(l) => tags.push(latency_tag(&l.metric, l.timing_origin)),
            RuleBody::Goodput(g) => tags.extend(g.slo.iter().map(|(t, _)| t.clone())),
            _ => {}
        }
    }
    tags.sort();
    tags.dedup();
    tags
}

/// The tag a latency rule reads: the metric, or its `_from_planned` twin.
pub fn latency_tag(metric: &str, origin: TimingOrigin) -> String {
    match origin {
        TimingOrigin::Sent => metric.to_string(),
        TimingOrigin::PlannedSend => match metric {
            "time_to_first_token" => TTFT_FROM_PLANNED.into(),
            "time_to_first_output_token" => TTFO_FROM_PLANNED.into(),
            "request_latency" => LATENCY_FROM_PLANNED.into(),
            m if m.ends_with("_from_planned") => m.to_string(),
            m => format!("{m}_from_planned"),
        },
    }
}

/// Expands and observes one side. `ids`: the caller's ids, in order after expansion.
pub fn observe_side(
    side: &str,
    dirs: &[PathBuf],
    ids: &[String],
    spec: &GateSpec,
    tags: &[String],
    tokenizer: Option<&str>,
) -> Result<Vec<RunObs>, Failure> {
    let pending = load::expand(side, dirs, tokenizer)?;
    if !ids.is_empty() && ids.len() != pending.len() {
        return Err(Failure::input(format!(
            "{side}: {} ids given for {} runs",
            ids.len(),
            pending.len()
        )));
    }
    let sample = spec
        .rules
        .iter()
        .filter_map(|r| match &r.body {
            RuleBody::Serialization(s) => Some(s.inspect_sample),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for (i, p) in pending.into_iter().enumerate() {
        let id = match ids.get(i) {
            Some(id) => id.clone(),
            None => evidence_id(&p.path)?,
        };
        out.push(observe_run(p, id, spec, tags, sample, tokenizer)?);
    }
    Ok(out)
}

/// `sha256:` of the run's evidence file (ours), or of an import's files in name order,
/// streamed. A ledger packet of ours gives the digest its manifest recorded of the evidence
/// it compressed (the original file's), and an import packet's `import/` holds the original
/// files: a run named by its directory or by its packet has the same id.
fn evidence_id(dir: &Path) -> Result<String, Failure> {
    let run = crate::RunDir::single(dir)?;
    if run.layout != crate::Layout::Run {
        return import_id(&run.path);
    }
    if let Some(packet) = run.packet() {
        let m = packet.join(crate::rundir::PACKET_MANIFEST);
        let text = std::fs::read_to_string(&m)
            .map_err(|e| Failure::input(format!("{}: {e}", m.display())))?;
        let doc: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Failure::input(format!("{}: {e}", m.display())))?;
        return doc["evidence"]["sha256"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Failure::input(format!("{}: evidence.sha256: missing", m.display())));
    }
    hash_files(&[run.path.join(&run.names().evidence)])
}

fn import_id(dir: &Path) -> Result<String, Failure> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    hash_files(&files)
}

fn hash_files(files: &[PathBuf]) -> Result<String, Failure> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    for f in files {
        let mut r =
            std::fs::File::open(f).map_err(|e| Failure::input(format!("{}: {e}", f.display())))?;
        loop {
            let n = r
                .read(&mut buf)
                .map_err(|e| Failure::input(format!("{}: {e}", f.display())))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// Accumulates one run's records.
struct Pass<'a> {
    tags: &'a [String],
    sample: usize,
    records: Vec<RecordObs>,
    violations: BTreeMap<Requirement, Violations>,
    samples: BTreeMap<u64, SamplePair>,
    reasoning_expected: bool,
    inspector: Option<Inspector>,
}

impl<'a> Pass<'a> {
    fn new(tags: &'a [String], sample: usize, reasoning_expected: bool) -> Pass<'a> {
        Pass {
            tags,
            sample,
            records: Vec::new(),
            violations: Requirement::ALL
                .into_iter()
                .map(|r| (r, Violations::default()))
                .collect(),
            samples: BTreeMap::new(),
            reasoning_expected,
            inspector: None,
        }
    }

    fn push(&mut self, r: &Record, metrics: &[RecordMetric]) {
        let mut values: Vec<Option<f64>> = self
            .tags
            .iter()
            .map(|t| metrics.iter().find(|m| m.tag == *t).and_then(value))
            .collect();
        let failed = r.is_error() || r.cancelled;
        for (i, t) in self.tags.iter().enumerate() {
            if values[i].is_none() && !failed {
                values[i] = from_planned(r, t);
            }
        }
        for (req, bad) in requirement_checks(r, self.reasoning_expected) {
            let v = self.violations.entry(req).or_default();
            let Some(bad) = bad else { continue };
            v.checked += 1;
            if bad {
                v.count += 1;
                v.first = Some(v.first.map_or(r.id, |f| f.min(r.id)));
            }
        }
        let kept = self.samples.len() < self.sample
            || self
                .samples
                .last_key_value()
                .is_some_and(|(k, _)| r.id < *k);
        if self.sample > 0 && kept {
            let mut pair = sample_pair(r);
            if let Some(i) = &self.inspector {
                let count = |t: &str| i.tokenizer.count(t) as u64;
                let a = inferbench_metrics::adapter::inspect(r, &count, i.reasoning_tags);
                pair.inspect_warnings = a.warnings;
                pair.inspect_notes = a.notes;
            }
            self.samples.insert(r.id, pair);
            if self.samples.len() > self.sample {
                self.samples.pop_last();
            }
        }
        self.records.push(RecordObs {
            id: r.id,
            failed,
            planned_ns: r.planned_ns,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            values,
        });
    }
}

fn value(m: &RecordMetric) -> Option<f64> {
    match m.value {
        RecordMetricValue::Int(i) => Some(i as f64),
        RecordMetricValue::Float(f) if f.is_finite() => Some(f),
        _ => None,
    }
}

/// `schedule.rs`'s `_from_planned` definitions for one valid record, in ms (and the
/// output-only twin of the first one).
fn from_planned(r: &Record, tag: &str) -> Option<f64> {
    let ms = |t: u64| t.saturating_sub(r.planned_ns) as f64 * 1e-6;
    if tag == TTFO_FROM_PLANNED {
        let first = r.events.iter().find(|e| e.has_output_text())?;
        return r.streaming.then(|| ms(first.t_ns));
    }
    let mut text = r.text_events();
    let first = text.next()?;
    match tag {
        TTFT_FROM_PLANNED if r.streaming => Some(ms(first.t_ns)),
        LATENCY_FROM_PLANNED => Some(ms(text.last().unwrap_or(first).t_ns)),
        _ => None,
    }
}

/// Each requirement on one record: `Some(true)` broken, `Some(false)` kept, `None` when it
/// does not apply (a failed request's stream is judged by goodput, not here).
pub(crate) fn requirement_checks(
    r: &Record,
    reasoning_expected: bool,
) -> Vec<(Requirement, Option<bool>)> {
    let completed = !r.is_error() && !r.cancelled;
    let data: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.kind() == EventKind::Data)
        .collect();
    let has_kind = |k: EventKind| r.events.iter().any(|e| e.kind() == k);
    let think = r.events.iter().any(|e| {
        e.content
            .as_deref()
            .is_some_and(|c| c.contains("<think>") || c.contains("</think>"))
    });
    let reasoning_in_content = reasoning_expected && think;
    let usage_last = data.last().map(|e| e.usage.is_none());
    let role_first = data.first().map(|e| e.has_text());
    vec![
        // The request asked for a stream, and a completed answer came as SSE data.
        (
            Requirement::Streaming,
            Some(!r.streaming || (completed && (has_kind(EventKind::Body) || data.is_empty()))),
        ),
        (
            Requirement::ReasoningSeparated,
            completed.then_some(reasoning_in_content || (!reasoning_expected && think)),
        ),
        (
            Requirement::UsageInFinalChunk,
            completed.then_some(usage_last.unwrap_or(true)),
        ),
        (
            Requirement::NoUnparsedEvents,
            Some(has_kind(EventKind::Other)),
        ),
        (
            Requirement::RoleOnlyFirstChunk,
            (completed && r.streaming).then_some(role_first.unwrap_or(true)),
        ),
        (
            Requirement::Terminated,
            completed.then_some(if r.streaming {
                !has_kind(EventKind::Done)
            } else {
                !has_kind(EventKind::Body)
            }),
        ),
    ]
}

fn sample_pair(r: &Record) -> SamplePair {
    let mut events: BTreeMap<&'static str, u64> = BTreeMap::new();
    for e in &r.events {
        *events.entry(e.kind().as_str()).or_default() += 1;
    }
    let summary = |e: &inferbench_core::record::Event| {
        let mut s = e.kind().as_str().to_string();
        if let Some(c) = &e.content {
            s.push_str(&format!(" content {:?}", truncate(c)));
        }
        if let Some(c) = &e.reasoning {
            s.push_str(&format!(" reasoning {:?}", truncate(c)));
        }
        if let Some(f) = &e.finish_reason {
            s.push_str(&format!(" finish_reason {f}"));
        }
        if let Some(u) = &e.usage {
            s.push_str(&format!(" usage {u}"));
        }
        s
    };
    SamplePair {
        record: r.id,
        payload_index: r.payload_index,
        status: r.status,
        request_bytes: r.request_bytes,
        events,
        first_event: r.events.first().map(summary),
        last_event: r.events.last().map(summary),
        inspect_warnings: Vec::new(),
        inspect_notes: Vec::new(),
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

/// True when the identity says reasoning reached the client (`reasoning_accounting` is not
/// `none`): `<think>` in content then breaks `reasoning_separated`. Without reasoning, any
/// `<think>` markup in content also breaks it (reasoning text outside its own field).
fn reasoning_expected(identity: Option<&Identity>) -> bool {
    identity
        .and_then(|i| i.get("reasoning_accounting"))
        .and_then(|p| p.value.as_str())
        .is_some_and(|v| v != "none")
}

fn observe_run(
    p: load::Pending,
    id: String,
    spec: &GateSpec,
    tags: &[String],
    sample: usize,
    tokenizer: Option<&str>,
) -> Result<RunObs, Failure> {
    let path = p.path.clone();
    let set = spec.definition_set.as_str();
    match p.source {
        Source::Ours(run) if set == inferbench_metrics::aiperf::NAME => {
            let manifest = run.manifest()?;
            let identity = manifest.identity.clone();
            let mut pass = Pass::new(tags, sample, reasoning_expected(identity.as_ref()));
            // A tokenizer that no longer loads (a moved local path) leaves the samples without
            // the inspect analysis; the requirement checks need none.
            pass.inspector = inferbench_workload::Tokenizer::load(&manifest.plan.tokenizer)
                .ok()
                .map(|t| Inspector {
                    tokenizer: std::sync::Arc::new(t),
                    reasoning_tags: manifest.plan.endpoint.reasoning_tags.is_some(),
                });
            let mut lines = run.evidence()?;
            let mut fold = Fold::new(lines.header(), &[], manifest.plan.confidence_level)?;
            for line in &mut lines {
                match line.map_err(|e| Failure::input(e.to_string()))? {
                    EvidenceLine::Record(r) => {
                        if let Some(m) = fold.push(&r) {
                            pass.push(&r, &m);
                        }
                    }
                    EvidenceLine::Phase(w) => fold.phase(w),
                    _ => {}
                }
            }
            let scores = fold.finish(&manifest.plan);
            let rate_ceiling = manifest
                .plan
                .load
                .request_rate
                .as_ref()
                .and_then(|r| r.ceiling)
                .map(|c| c as u64);
            Ok(RunObs {
                id,
                path,
                identity,
                summary: scores.profiling,
                window: scores.profiling_window,
                records: pass.records,
                violations: pass.violations,
                samples: pass.samples.into_values().collect(),
                client: run.client_resources()?,
                rate_ceiling,
                workers_max: manifest.plan.workers_max,
            })
        }
        Source::Ours(run) => {
            let loaded = offline::load(&run.path, tokenizer)?;
            let client = run.client_resources()?;
            observe_loaded(&loaded, id, path, set, tags, sample, client)
        }
        Source::Imported(loaded) => observe_loaded(&loaded, id, path, set, tags, sample, None),
    }
}

fn observe_loaded(
    loaded: &offline::Loaded,
    id: String,
    path: PathBuf,
    set: &str,
    tags: &[String],
    sample: usize,
    client: Option<ClientResources>,
) -> Result<RunObs, Failure> {
    let computed = offline::score_set(loaded, set, None)?;
    let identity = crate::grade::identity_of(loaded);
    let by_id: BTreeMap<u64, &[RecordMetric]> = computed
        .per_record
        .iter()
        .map(|r| (r.id, r.metrics.as_slice()))
        .collect();
    let mut pass = Pass::new(tags, sample, reasoning_expected(Some(&identity)));
    pass.inspector = Some(Inspector {
        tokenizer: loaded.tokenizer.clone(),
        reasoning_tags: loaded
            .manifest
            .as_ref()
            .is_some_and(|m| m.plan.endpoint.reasoning_tags.is_some()),
    });
    for r in loaded.evidence.records_of(Phase::Profiling) {
        pass.push(r, by_id.get(&r.id).copied().unwrap_or(&[]));
    }
    let rate_ceiling = loaded
        .manifest
        .as_ref()
        .and_then(|m| m.plan.load.request_rate.as_ref())
        .and_then(|r| r.ceiling)
        .map(|c| c as u64);
    Ok(RunObs {
        id,
        path,
        identity: Some(identity),
        summary: computed.summary,
        window: loaded.evidence.window(Phase::Profiling),
        records: pass.records,
        violations: pass.violations,
        samples: pass.samples.into_values().collect(),
        client,
        rate_ceiling,
        workers_max: loaded.manifest.as_ref().and_then(|m| m.plan.workers_max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::{Event, EventKind, EventKindOpt};

    fn record(id: u64, content: &str) -> Record {
        Record {
            id,
            streaming: true,
            events: vec![
                Event {
                    content: Some(content.into()),
                    ..Default::default()
                },
                Event {
                    kind: EventKindOpt(EventKind::Done),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn samples_carry_the_inspect_analysis_and_only_the_first_n_by_id() {
        let tags: Vec<String> = Vec::new();
        let mut pass = Pass::new(&tags, 2, false);
        pass.inspector = Some(Inspector {
            tokenizer: std::sync::Arc::new(inferbench_workload::Tokenizer::builtin().unwrap()),
            reasoning_tags: false,
        });
        // Out of id order, as records complete: ids 5, 1, 9, 3 keep 1 and 3.
        for (id, text) in [(5, "plain"), (1, "<think>x</think> y"), (9, "z"), (3, "w")] {
            pass.push(&record(id, text), &[]);
        }
        let ids: Vec<u64> = pass.samples.keys().copied().collect();
        assert_eq!(ids, [1, 3]);
        let first = &pass.samples[&1];
        // The content holds <think> markup without --reasoning-tags: inspect warns, and a
        // stream without usage is the other warning it gives.
        assert!(
            first.inspect_warnings.iter().any(|w| w.contains("<think>")),
            "{:?}",
            first.inspect_warnings
        );
        assert!(
            first
                .inspect_warnings
                .iter()
                .any(|w| w.contains("no usage in the stream")),
            "{:?}",
            first.inspect_warnings
        );
        assert!(
            !pass.samples[&3]
                .inspect_warnings
                .iter()
                .any(|w| w.contains("<think>"))
        );
    }
}
