//! A run re-read from disk: replayed through the record sink (`metrics DIR --write`, which
//! then writes the same files the live run wrote), re-scored without writing, or loaded
//! whole (our own run, or another tool's directory through an importer) for the
//! definition sets that score a run as a whole.

use std::path::Path;
use std::sync::Arc;

use inferbench_core::manifest::Manifest;
use inferbench_core::plan::TokenizerSpec;
use inferbench_core::{Evidence, EvidenceLine, Phase};
use inferbench_workload::Tokenizer;

use crate::Failure;
use crate::fold::{Fold, Scores};
use crate::rundir::{Layout, RunDir, StoredSummary};
use crate::sink::{Finished, RecordSink, SinkSpec};

fn slos(manifest: &Manifest) -> Result<Vec<inferbench_metrics::aiperf::Slo>, Failure> {
    crate::prepare::live_slos(&manifest.plan)
}

/// Replays a run's evidence through the record sink: every export, summary, the console,
/// the manifest and the results-ready marker are written again, exactly as the live run
/// wrote them (side files are kept as they are). `manifest` is the run's, possibly with
/// another `--goodput`.
pub fn rewrite(run: &RunDir, manifest: &Manifest) -> Result<Finished, Failure> {
    run.writable("--write")?;
    let mut lines = run.evidence()?;
    let header = lines.header().clone();
    let plan = &manifest.plan;
    let slos = slos(manifest)?;
    let mut sink = RecordSink::open(SinkSpec {
        dir: &run.path,
        plan,
        header: &header,
        workload: Arc::new(run.workload()?),
        slos: &slos,
        has_warmup: crate::prepare::has_warmup(plan),
    })?;
    sink.keep_side_files();
    let mut end = None;
    for line in &mut lines {
        match line.map_err(|e| Failure::input(e.to_string()))? {
            EvidenceLine::Record(r) => sink.record(&r)?,
            EvidenceLine::Phase(w) => sink.phase(w),
            EvidenceLine::End(e) => end = Some(e),
            EvidenceLine::Header(_) => {}
        }
    }
    sink.finish(end.as_ref(), manifest, &run.inputs()?)
}

/// Re-scores a run of ours under `aiperf-0.13` from its evidence, a record at a time,
/// writing nothing. Also returns whether the evidence is partial.
pub fn rescore(run: &RunDir, manifest: &Manifest) -> Result<(Scores, bool), Failure> {
    let mut lines = run.evidence()?;
    let mut fold = Fold::new(
        lines.header(),
        &slos(manifest)?,
        manifest.plan.confidence_level,
    )?;
    let mut complete = false;
    for line in &mut lines {
        match line.map_err(|e| Failure::input(e.to_string()))? {
            EvidenceLine::Record(r) => {
                fold.push(&r);
            }
            EvidenceLine::Phase(w) => fold.phase(w),
            EvidenceLine::End(e) => {
                complete = e.stop_reason == inferbench_core::StopReason::Completed
            }
            EvidenceLine::Header(_) => {}
        }
    }
    Ok((fold.finish(&manifest.plan), !complete))
}

/// Compares recomputed scores with a stored summary of ours, metric by metric, as the
/// summary file writes them: the differences (empty when identical).
pub fn differences(scores: &Scores, stored: &StoredSummary) -> Vec<String> {
    let mut diffs = Vec::new();
    for m in &scores.profiling.metrics {
        let ours = inferbench_artifacts::summary_json::metric_json(m);
        match stored.document.get(&m.tag) {
            Some(s) if *s == ours => {}
            Some(s) => diffs.push(format!("{}: stored {s}, recomputed {ours}", m.tag)),
            None => diffs.push(format!("{}: not in the stored summary", m.tag)),
        }
    }
    diffs
}

/// A run to score under any set: ours, or another tool's, imported on the fly.
pub struct Loaded {
    pub run: RunDir,
    pub evidence: Evidence,
    /// Our run's manifest (None for an imported run).
    pub manifest: Option<Manifest>,
    pub imported: Option<inferbench_import::ImportedRun>,
    pub tokenizer: Arc<Tokenizer>,
    /// Things the user should be told about how the run was read.
    pub notes: Vec<String>,
    /// Our run, opened by [`load_streamed`]: `evidence` holds the header only, and every
    /// reader of the records streams them from the file instead.
    pub streamed: bool,
}

impl Loaded {
    /// The set that reproduces the run's own summary.
    pub fn native_set(&self) -> &str {
        match &self.imported {
            Some(i) => &i.native_definitions,
            None => inferbench_metrics::aiperf::NAME,
        }
    }

    /// The run's confidence level (0.95 for an import, as the tools' default).
    pub fn confidence_level(&self) -> f64 {
        self.manifest
            .as_ref()
            .map_or(0.95, |m| m.plan.confidence_level)
    }
}

/// Loads one run whole: our evidence if it is ours, else an import. `tokenizer` overrides
/// the run's own (an import has none: the built-in one is used unless given).
pub fn load(dir: &Path, tokenizer: Option<&str>) -> Result<Loaded, Failure> {
    load_as(dir, tokenizer, false)
}

/// As [`load`], but our own run's records stay on disk (memory stays flat whatever the
/// run's size): for grading and the ledger, which fold the evidence a record at a time.
/// [`score_set`] still works on it (it reads the records then). An import, or a manifest
/// written before identity was recorded, is loaded whole.
pub fn load_streamed(dir: &Path, tokenizer: Option<&str>) -> Result<Loaded, Failure> {
    load_as(dir, tokenizer, true)
}

fn load_as(dir: &Path, tokenizer: Option<&str>, stream: bool) -> Result<Loaded, Failure> {
    let run = RunDir::single(dir)?;
    if run.layout == Layout::Run {
        let manifest = run.manifest()?;
        let spec = match tokenizer {
            Some(t) => TokenizerSpec::from_flag(Some(t)),
            None => manifest.plan.tokenizer.clone(),
        };
        let tok =
            Tokenizer::load(&spec).map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
        let streamed = stream && manifest.identity.is_some();
        let evidence = if streamed {
            Evidence {
                header: run.evidence_header()?,
                records: Vec::new(),
                phases: Vec::new(),
                end: None,
            }
        } else {
            run.load_evidence()?
        };
        return Ok(Loaded {
            evidence,
            streamed,
            run,
            manifest: Some(manifest),
            imported: None,
            tokenizer: Arc::new(tok),
            notes: Vec::new(),
        });
    }
    let tok = Tokenizer::load(&TokenizerSpec::from_flag(tokenizer))
        .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
    let count = |t: &str| tok.count(t) as u64;
    let imported =
        // `run.path`: a packet's `import/` when `dir` is a ledger packet.
        inferbench_import::import(&run.path, &count).map_err(|e| Failure::input(e.to_string()))?;
    let mut notes = Vec::new();
    if tokenizer.is_none() {
        notes.push(format!(
            "{} was written by {}: texts are tokenized with the built-in o200k_base tokenizer; pass --tokenizer (the run's tokenizer.json) to count as the original run did",
            dir.display(),
            imported.tool.as_str()
        ));
    }
    Ok(Loaded {
        run,
        evidence: imported.evidence.clone(),
        manifest: None,
        imported: Some(imported),
        tokenizer: Arc::new(tok),
        notes,
        streamed: false,
    })
}

/// Scores a loaded run under any set, over its profiling records.
pub fn score_set(
    loaded: &Loaded,
    set: &str,
    goodput: Option<&str>,
) -> Result<inferbench_metrics::Computed, Failure> {
    let set =
        inferbench_metrics::find(set).map_err(|e| Failure::input(format!("--definitions: {e}")))?;
    let goodput = match goodput {
        Some(g) => set
            .parse_goodput(g)
            .map_err(|e| Failure::input(e.to_string()))?,
        None => inferbench_metrics::Goodput::default(),
    };
    let tok = loaded.tokenizer.clone();
    let count = move |t: &str| tok.count(t) as u64;
    let whole;
    let evidence = if loaded.streamed {
        whole = loaded.run.load_evidence()?;
        &whole
    } else {
        &loaded.evidence
    };
    set.score(
        evidence,
        Phase::Profiling,
        &count,
        &goodput,
        loaded.confidence_level(),
    )
    .map_err(|e| Failure::input(format!("--definitions: {e}")))
}

/// What a comparison with a tool's own summary covered: every value the file holds, how
/// many of them were compared, and the tags of those nothing recomputed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Comparison {
    /// Numeric values of the file's metric entries (`{tag: {unit, avg, p50, …}}` objects'
    /// numbers, and bare top-level numbers).
    pub in_file: usize,
    /// Values compared (each is equal or listed in `diffs`).
    pub compared: usize,
    pub diffs: Vec<String>,
    /// Tags of the file with values left uncompared (nothing recomputed them), in file
    /// order, with the count of those values.
    pub skipped: Vec<(String, usize)>,
}

impl Comparison {
    /// Values of the file that were not compared.
    pub fn not_compared(&self) -> usize {
        self.in_file.saturating_sub(self.compared)
    }

    /// One line: what reproduced (or how many differ) out of what the file holds.
    pub fn describe(&self, set: &str) -> String {
        let head = if self.diffs.is_empty() {
            format!(
                "all {} compared values of the original summary reproduced under {set}",
                self.compared
            )
        } else {
            format!(
                "{} of {} compared values of the original summary differ under {set}",
                self.diffs.len(),
                self.compared
            )
        };
        let mut line = format!("{head}; the file holds {} values", self.in_file);
        if self.not_compared() > 0 {
            let tags: Vec<&str> = self.skipped.iter().map(|(t, _)| t.as_str()).collect();
            line.push_str(&format!(
                ", {} not compared (not recomputed: {})",
                self.not_compared(),
                tags.join(", ")
            ));
        }
        line
    }
}

/// The numeric values of one entry of a summary file (what a comparison can look at).
fn values_in(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Object(o) if o.contains_key("unit") => o
            .iter()
            .filter(|(k, v)| *k != "unit" && v.is_number())
            .count(),
        v if v.is_number() => 1,
        _ => 0,
    }
}

/// [`compare_with_original`], also counting what the file holds and what was not compared.
pub fn compare_counted(
    summary: &inferbench_core::Summary,
    original: &serde_json::Value,
) -> Comparison {
    let (compared, diffs) = compare_with_original(summary, original);
    let mut in_file = 0;
    let mut skipped = Vec::new();
    if let Some(o) = original.as_object() {
        for (tag, v) in o {
            let n = values_in(v);
            in_file += n;
            // Per tag: a metric we have may still leave some of its values uncompared.
            let one = serde_json::json!({ tag.as_str(): v });
            let (done, _) = compare_with_original(summary, &one);
            if done < n {
                skipped.push((tag.clone(), n - done));
            }
        }
    }
    Comparison {
        in_file,
        compared,
        diffs,
        skipped,
    }
}

/// Compares a computed summary with a tool's own summary JSON (`{tag: {unit, avg, p50, …}}`,
/// or a bare number): (values compared, differences).
pub fn compare_with_original(
    summary: &inferbench_core::Summary,
    original: &serde_json::Value,
) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut diffs = Vec::new();
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    for m in &summary.metrics {
        let Some(o) = original.get(&m.tag) else {
            continue;
        };
        let pairs: Vec<(String, Option<f64>, Option<f64>)> = match (m.stats(), o) {
            (Some(s), serde_json::Value::Object(obj)) => obj
                .iter()
                .filter(|(k, v)| *k != "unit" && v.is_number())
                .map(|(k, v)| (k.clone(), s.get(k), v.as_f64()))
                .collect(),
            (None, serde_json::Value::Object(obj)) => vec![(
                "avg".into(),
                m.avg(),
                obj.get("avg").and_then(serde_json::Value::as_f64),
            )],
            (_, v) if v.is_number() => vec![("value".into(), m.avg(), v.as_f64())],
            _ => continue,
        };
        for (stat, ours, theirs) in pairs {
            let Some(theirs) = theirs else { continue };
            n += 1;
            match ours {
                Some(x) if close(x, theirs) => {}
                Some(x) => diffs.push(format!(
                    "{}.{stat}: original {theirs}, recomputed {x}",
                    m.tag
                )),
                None => diffs.push(format!(
                    "{}.{stat}: original {theirs}, not recomputed",
                    m.tag
                )),
            }
        }
    }
    (n, diffs)
}
