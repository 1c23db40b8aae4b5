//! Lines of the evidence file (`inferbench_evidence.jsonl`): one header, then records and
//! phase summaries in the order they happened, then one end line. Every line is a JSON object
//! with a `"line"` tag. A killed run lacks the end line (and maybe phase lines); a reader then
//! treats the run as partial and derives phase windows from the records.

use serde::{Deserialize, Serialize};

use crate::record::{Phase, Record};

pub const EVIDENCE_FILE: &str = "inferbench_evidence.jsonl";

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EvidenceHeader {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// Wall clock (Unix ns) at the run anchor: `wall_ns = anchor_unix_ns + t_ns`.
    pub anchor_unix_ns: u64,
    pub benchmark_id: String,
    pub endpoint_type: String,
    pub streaming: bool,
    /// Name of the tokenizer that made `tokens` in the records.
    pub tokenizer: String,
    /// Whether token metrics use the server's usage (`--use-server-token-count`).
    pub use_server_token_count: bool,
}

/// Issuing window of one phase, as AIPerf reports it: `start_ns` when the phase began
/// issuing, `sent_end_ns` when its last request was sent, `requests_end_ns` when its last
/// request finished (errors included). All from the anchor.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct PhaseWindow {
    pub phase: Phase,
    pub start_ns: u64,
    pub sent_end_ns: u64,
    pub requests_end_ns: u64,
    pub scheduled: u64,
    pub completed: u64,
    pub errors: u64,
    pub cancelled: bool,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every scheduled request finished.
    Completed,
    /// Ctrl-C: issuing stopped early; in-flight requests were let finish or time out.
    Interrupted,
    /// The run failed before finishing (see the manifest's error).
    Failed,
    /// The run had not finished when this was written. The manifest is first written with
    /// this at the start of a run and replaced at its end, so a process that was killed or
    /// crashed leaves a manifest that says so.
    Unfinished,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EvidenceEnd {
    pub stop_reason: StopReason,
    pub end_ns: u64,
    pub records: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum EvidenceLine {
    Header(EvidenceHeader),
    Record(Box<Record>),
    Phase(PhaseWindow),
    End(EvidenceEnd),
}

/// A whole evidence file, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    pub header: EvidenceHeader,
    pub records: Vec<Record>,
    pub phases: Vec<PhaseWindow>,
    pub end: Option<EvidenceEnd>,
}

impl Evidence {
    /// True when the run did not finish normally (no end line, or stopped early).
    pub fn is_partial(&self) -> bool {
        !matches!(
            self.end.as_ref().map(|e| e.stop_reason),
            Some(StopReason::Completed)
        )
    }

    pub fn records_of(&self, phase: Phase) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(move |r| r.phase() == phase)
    }

    /// The phase window as written, or, for a run killed before writing it, derived from the
    /// records (first planned send to last end).
    pub fn window(&self, phase: Phase) -> Option<PhaseWindow> {
        if let Some(w) = self.phases.iter().find(|w| w.phase == phase) {
            return Some(*w);
        }
        let recs: Vec<&Record> = self.records_of(phase).collect();
        if recs.is_empty() {
            return None;
        }
        let start = recs.iter().map(|r| r.planned_ns.min(r.start_ns)).min()?;
        let sent_end = recs.iter().map(|r| r.start_ns).max()?;
        let end = recs.iter().map(|r| r.end_ns).max()?;
        Some(PhaseWindow {
            phase,
            start_ns: start,
            sent_end_ns: sent_end,
            requests_end_ns: end,
            scheduled: recs.len() as u64,
            completed: recs.len() as u64,
            errors: recs.iter().filter(|r| r.is_error()).count() as u64,
            cancelled: true,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("{path}:{line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

/// One line. Records are by far the most numerous: when the tag comes first (as the writer
/// puts it), a record is deserialized directly, skipping serde's buffering of internally
/// tagged enums, which costs several times the parse itself.
fn parse_line(line: &str) -> Result<EvidenceLine, serde_json::Error> {
    if line.starts_with(r#"{"line":"record","#) {
        return serde_json::from_str::<Record>(line).map(|r| EvidenceLine::Record(Box::new(r)));
    }
    serde_json::from_str(line)
}

/// Parse an evidence file's text. `path` is only used in error messages. A last line that is
/// cut (a crash while writing it) is ignored; any other bad line is an error naming the line.
pub fn parse_evidence(path: &str, text: &str) -> Result<Evidence, EvidenceError> {
    let mut header = None;
    let mut records = Vec::new();
    let mut phases = Vec::new();
    let mut end = None;
    let lines: Vec<&str> = text.lines().collect();
    let ends_with_newline = text.ends_with('\n');
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: EvidenceLine = match parse_line(line) {
            Ok(l) => l,
            Err(e) => {
                // Only the very last line may be cut short by a crash mid-write.
                if i + 1 == lines.len() && !ends_with_newline {
                    break;
                }
                return Err(EvidenceError::Line {
                    path: path.to_string(),
                    line: i + 1,
                    message: format!("not an evidence line: {e}"),
                });
            }
        };
        match parsed {
            EvidenceLine::Header(h) => {
                if header.is_some() {
                    return Err(EvidenceError::Line {
                        path: path.into(),
                        line: i + 1,
                        message: "a second header line".into(),
                    });
                }
                if h.schema_version > crate::record::EVIDENCE_SCHEMA_VERSION {
                    return Err(EvidenceError::Line {
                        path: path.into(),
                        line: i + 1,
                        message: format!(
                            "evidence schema_version {} is newer than this inferbench reads ({})",
                            h.schema_version,
                            crate::record::EVIDENCE_SCHEMA_VERSION
                        ),
                    });
                }
                header = Some(h)
            }
            EvidenceLine::Record(r) => records.push(*r),
            EvidenceLine::Phase(p) => phases.push(p),
            EvidenceLine::End(e) => end = Some(e),
        }
        if header.is_none() {
            return Err(EvidenceError::Line {
                path: path.into(),
                line: i + 1,
                message: "the first line must be the header".into(),
            });
        }
    }
    let header = header.ok_or_else(|| EvidenceError::File {
        path: path.into(),
        message: "empty: no header line".into(),
    })?;
    Ok(Evidence {
        header,
        records,
        phases,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> EvidenceHeader {
        EvidenceHeader {
            schema_version: 1,
            tool: "inferbench".into(),
            tool_version: "0".into(),
            anchor_unix_ns: 1,
            benchmark_id: "b".into(),
            endpoint_type: "chat".into(),
            streaming: true,
            tokenizer: "builtin".into(),
            use_server_token_count: false,
        }
    }

    #[test]
    fn parses_and_tolerates_a_cut_last_line() {
        let h = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
        let r = serde_json::to_string(&EvidenceLine::Record(Box::default())).unwrap();
        let text = format!("{h}\n{r}\n{{\"line\":\"rec");
        let ev = parse_evidence("x", &text).unwrap();
        assert_eq!(ev.records.len(), 1);
        assert!(ev.is_partial());
        assert!(ev.window(Phase::Profiling).is_some());
    }

    #[test]
    fn a_bad_middle_line_names_its_number() {
        let h = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
        let text = format!("{h}\nnot json\n{h}\n");
        let err = parse_evidence("ev.jsonl", &text).unwrap_err().to_string();
        assert!(err.starts_with("ev.jsonl:2:"), "{err}");
    }
}
