//! Correctness during the performance run: expected answers frozen with the workload, every
//! completed response scored (`docs/correctness.md`).
//!
//! The expected answers are frozen in `expected_answers.jsonl` (payload index → canonical
//! answer) before the first request; its `sha256:` digest is the manifest's
//! `dataset.answers_sha256` and the gate's `answers`. Scores are a view: the record sink
//! scores each profiling record as it passes (live, and replayed by `metrics DIR --write`,
//! so both write the same `correctness.jsonl` and `correctness.json`), and [`tally`]
//! recomputes the same counts from the evidence.

use std::collections::BTreeMap;
use std::path::Path;

use inferbench_core::Record;
use inferbench_core::summary::{MetricResult, MetricValue};
use inferbench_core::workload::Workload;
use inferbench_metrics::correctness::{Answer, KINDS, accuracy, score};
use serde_json::{Value, json};

use crate::side_files::{CORRECTNESS, CORRECTNESS_RECORDS, EXPECTED_ANSWERS};
use crate::{Failure, RunDir};

/// A run's correctness, counted over its profiling records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// `sha256:` of the run's expected-answer set (the gate's `answers`).
    pub answers_digest: String,
    /// Completed responses that had an expected answer, scored.
    pub scored: u64,
    /// Of those, the ones the scorer accepted.
    pub correct: u64,
    /// Of the scored, empty or degenerate outputs (one token repeated).
    pub degenerate: u64,
    /// Failed requests that had an expected answer (not scored; they are in goodput).
    pub errors: u64,
    /// Completed responses whose payload had no expected answer.
    pub unanswered: u64,
}

/// The run's tally, `None` when the run carries no expected answers.
pub fn tally(run: &RunDir) -> Result<Option<Tally>, Failure> {
    let Some(set) = AnswerSet::read(&run.path)? else {
        return Ok(None);
    };
    let mut scorer = Scorer::new(set);
    let mut lines = run.evidence()?;
    for line in &mut lines {
        if let inferbench_core::EvidenceLine::Record(r) =
            line.map_err(|e| Failure::input(e.to_string()))?
            && r.phase() == inferbench_core::Phase::Profiling
        {
            scorer.push(&r)?;
        }
    }
    Ok(Some(scorer.tally))
}

/// A run's expected answers: payload index → answer, with the frozen file's bytes.
#[derive(Clone, Debug)]
pub struct AnswerSet {
    answers: BTreeMap<u64, Answer>,
    bytes: Vec<u8>,
    digest: String,
}

impl AnswerSet {
    /// The answers of a built workload (`answers[i]` is payload `i`'s); None when no payload
    /// has one. Each line: `{"payload_index", "conversation_id", "turn_index", "answer"}`,
    /// the answer in its canonical form.
    pub fn from_workload(workload: &Workload, answers: &[Option<Answer>]) -> Option<AnswerSet> {
        let mut map = BTreeMap::new();
        let mut bytes = Vec::new();
        for (i, (p, a)) in workload.payloads.iter().zip(answers).enumerate() {
            let Some(a) = a else { continue };
            let line = json!({
                "payload_index": i,
                "conversation_id": p.conversation_id,
                "turn_index": p.turn_index,
                "answer": a.canonical(),
            });
            bytes.extend_from_slice(line.to_string().as_bytes());
            bytes.push(b'\n');
            map.insert(i as u64, a.clone());
        }
        (!map.is_empty()).then(|| AnswerSet {
            digest: digest(&bytes),
            answers: map,
            bytes,
        })
    }

    /// The frozen set of a run directory (None when it has no `expected_answers.jsonl`). A
    /// bad line is an error naming the file, the line and the field.
    pub fn read(dir: &Path) -> Result<Option<AnswerSet>, Failure> {
        let p = dir.join(EXPECTED_ANSWERS);
        let bytes = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Failure::input(format!("{}: {e}", p.display()))),
        };
        let shown = p.display().to_string();
        let text = String::from_utf8(bytes.clone())
            .map_err(|_| Failure::input(format!("{shown}: not UTF-8 text")))?;
        let mut answers = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let no = i + 1;
            let v: Value = serde_json::from_str(line)
                .map_err(|e| Failure::input(format!("{shown}:{no}: not valid JSON: {e}")))?;
            let idx = v
                .get("payload_index")
                .and_then(Value::as_u64)
                .ok_or_else(|| {
                    Failure::input(format!(
                        "{shown}:{no}: field 'payload_index': expected an integer >= 0"
                    ))
                })?;
            let a = Answer::parse(v.get("answer").unwrap_or(&Value::Null), "answer")
                .map_err(|e| Failure::input(format!("{shown}:{no}: {e}")))?;
            answers.insert(idx, a);
        }
        Ok(Some(AnswerSet {
            digest: digest(&bytes),
            answers,
            bytes,
        }))
    }

    /// `sha256:` of the frozen file's bytes.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    pub fn get(&self, payload_index: u64) -> Option<&Answer> {
        self.answers.get(&payload_index)
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// Every answer with its payload index, in payload order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Answer)> {
        self.answers.iter().map(|(i, a)| (*i, a))
    }
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", inferbench_core::seed::sha256_hex(bytes))
}

/// Writes the run's expected answers into its directory (nothing when it has none).
pub fn freeze(dir: &Path, set: Option<&AnswerSet>) -> Result<(), Failure> {
    let Some(set) = set else { return Ok(()) };
    let mut f = inferbench_artifacts::AtomicFile::create(dir, EXPECTED_ANSWERS)?;
    f.write_all(&set.bytes)?;
    f.commit()?;
    Ok(())
}

/// The response text that is scored: the `content` of its events, concatenated (reasoning
/// is not part of the answer).
pub fn response_text(r: &Record) -> String {
    r.events
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect()
}

/// Scores profiling records one at a time; optionally writes `correctness.jsonl` as it goes.
pub struct Scorer {
    set: AnswerSet,
    pub tally: Tally,
    by_kind: BTreeMap<&'static str, (u64, u64)>,
    lines: Option<inferbench_artifacts::AtomicFile>,
}

impl Scorer {
    pub fn new(set: AnswerSet) -> Scorer {
        let mut by_kind = BTreeMap::new();
        for (_, a) in set.iter() {
            by_kind.entry(a.kind()).or_insert((0, 0));
        }
        Scorer {
            tally: Tally {
                answers_digest: set.digest.clone(),
                scored: 0,
                correct: 0,
                degenerate: 0,
                errors: 0,
                unanswered: 0,
            },
            set,
            by_kind,
            lines: None,
        }
    }

    /// A scorer that writes the per-record file into `dir`.
    pub fn writing(set: AnswerSet, dir: &Path) -> Result<Scorer, Failure> {
        let mut s = Scorer::new(set);
        s.lines = Some(inferbench_artifacts::AtomicFile::create(
            dir,
            CORRECTNESS_RECORDS,
        )?);
        Ok(s)
    }

    /// One profiling record.
    pub fn push(&mut self, r: &Record) -> Result<(), Failure> {
        let failed = r.error.is_some() || r.cancelled;
        let Some(answer) = self.set.get(r.payload_index) else {
            if !failed {
                self.tally.unanswered += 1;
            }
            return Ok(());
        };
        let kind = answer.kind();
        let (outcome, degenerate, extracted) = if failed {
            self.tally.errors += 1;
            ("error", false, None)
        } else {
            let s = score(answer, &response_text(r));
            self.tally.scored += 1;
            let e = self.by_kind.entry(kind).or_insert((0, 0));
            e.0 += 1;
            if s.correct {
                self.tally.correct += 1;
                e.1 += 1;
            }
            if s.degenerate {
                self.tally.degenerate += 1;
            }
            (
                if s.correct { "correct" } else { "wrong" },
                s.degenerate,
                s.extracted,
            )
        };
        if let Some(f) = &mut self.lines {
            let line = json!({
                "record_id": r.id,
                "request_id": r.request_id,
                "payload_index": r.payload_index,
                "conversation_id": r.conversation_id,
                "turn_index": r.turn_index,
                "kind": kind,
                "outcome": outcome,
                "degenerate": degenerate,
                "extracted": extracted,
            });
            let mut b = line.to_string().into_bytes();
            b.push(b'\n');
            f.write_all(&b)?;
        }
        Ok(())
    }

    /// `correctness.json` for a run at `confidence`.
    pub fn summary(&self, confidence: f64) -> Value {
        let t = &self.tally;
        let acc = accuracy(t.correct, t.scored, confidence);
        let frac = |k: u64| (t.scored > 0).then(|| k as f64 / t.scored as f64);
        let mut by_kind = serde_json::Map::new();
        for k in KINDS {
            if let Some((scored, correct)) = self.by_kind.get(k) {
                by_kind.insert(k.into(), json!({"scored": scored, "correct": correct}));
            }
        }
        json!({
            "schema": "inferbench.correctness/1",
            "answers": t.answers_digest,
            "answers_file": EXPECTED_ANSWERS,
            "expected_answers": self.set.len(),
            "scored": t.scored,
            "correct": t.correct,
            "accuracy": acc.fraction,
            "interval": match (acc.low, acc.high) {
                (Some(low), Some(high)) => json!({
                    "method": "wilson", "confidence": confidence, "low": low, "high": high
                }),
                _ => Value::Null,
            },
            "degenerate": t.degenerate,
            "degenerate_fraction": frac(t.degenerate),
            "errors": t.errors,
            "unanswered": t.unanswered,
            "by_kind": by_kind,
        })
    }

    /// The console's rows (percent), when anything was scored.
    pub fn metrics(&self, confidence: f64) -> Vec<MetricResult> {
        let t = &self.tally;
        let acc = accuracy(t.correct, t.scored, confidence);
        let scalar = |tag: &str, header: &str, v: f64| MetricResult {
            tag: tag.into(),
            header: header.into(),
            unit: "%".into(),
            value: MetricValue::Scalar { value: v * 100.0 },
        };
        let mut out = Vec::new();
        if let (Some(f), Some(low), Some(high)) = (acc.fraction, acc.low, acc.high) {
            out.push(scalar("answer_accuracy", "Answer accuracy", f));
            out.push(scalar(
                "answer_accuracy_ci_low",
                "Answer accuracy CI low",
                low,
            ));
            out.push(scalar(
                "answer_accuracy_ci_high",
                "Answer accuracy CI high",
                high,
            ));
            out.push(scalar(
                "degenerate_output_fraction",
                "Degenerate outputs",
                t.degenerate as f64 / t.scored as f64,
            ));
        }
        out
    }

    /// Commits `correctness.jsonl` (when writing) and writes `correctness.json` into `dir`.
    pub fn finish(self, dir: &Path, confidence: f64) -> Result<Vec<MetricResult>, Failure> {
        let summary = self.summary(confidence);
        let metrics = self.metrics(confidence);
        if let Some(f) = self.lines {
            f.commit()?;
        }
        let mut text = serde_json::to_string_pretty(&summary)
            .map_err(|e| Failure::run(e.to_string()))?
            .into_bytes();
        text.push(b'\n');
        let mut f = inferbench_artifacts::AtomicFile::create(dir, CORRECTNESS)?;
        f.write_all(&text)?;
        f.commit()?;
        Ok(metrics)
    }
}

/// A summary without the correctness rows the sink adds for the console, for the files in
/// AIPerf's format built from it (the aggregates of repeated runs and sweeps).
pub fn without_console_rows(mut summary: inferbench_core::Summary) -> inferbench_core::Summary {
    use inferbench_artifacts::console::{CORRECTNESS_ROWS, TELEMETRY_ROWS};
    summary.metrics.retain(|m| {
        let t = m.tag.as_str();
        !CORRECTNESS_ROWS.contains(&t) && !TELEMETRY_ROWS.contains(&t)
    });
    summary
}

#[cfg(test)]
#[path = "correctness_tests.rs"]
mod tests;
