//! Lines of the evidence file (`inferbench_evidence.jsonl`): one header, then records and
//! phase summaries in the order they happened, then one end line. Every line is a JSON object
//! with a `"line"` tag. A killed run lacks the end line (and maybe phase lines); a reader then
//! treats the run as partial and derives phase windows from the records.

use serde::{Deserialize, Serialize};

use crate::record::{Phase, Record};

pub const EVIDENCE_FILE: &str = "inferbench_evidence.jsonl";
/// The same lines compressed (`--evidence-compression zstd`): concatenated zstd frames.
pub const EVIDENCE_FILE_ZST: &str = "inferbench_evidence.jsonl.zst";

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
    /// `--per-chunk-usage`: ITL's first-chunk token count comes from the first content
    /// chunk's cumulative usage (AIPerf 0.13). Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_chunk_usage: bool,
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
    /// records (see [`DerivedWindow`]).
    pub fn window(&self, phase: Phase) -> Option<PhaseWindow> {
        if let Some(w) = self.phases.iter().find(|w| w.phase == phase) {
            return Some(*w);
        }
        let mut d = DerivedWindow::default();
        self.records_of(phase).for_each(|r| d.push(r));
        d.window(phase)
    }
}

/// The window of a phase whose run was killed before writing it, built from its records one
/// at a time: first planned send (or send, if earlier) to last end, every record counted as
/// scheduled and completed, and the phase marked cancelled.
#[derive(Clone, Copy, Debug, Default)]
pub struct DerivedWindow {
    n: u64,
    errors: u64,
    start: u64,
    sent_end: u64,
    end: u64,
}

impl DerivedWindow {
    pub fn push(&mut self, r: &Record) {
        let start = r.planned_ns.min(r.start_ns);
        self.start = if self.n == 0 {
            start
        } else {
            self.start.min(start)
        };
        self.sent_end = self.sent_end.max(r.start_ns);
        self.end = self.end.max(r.end_ns);
        self.n += 1;
        self.errors += u64::from(r.is_error());
    }

    /// Records seen so far.
    pub fn records(&self) -> u64 {
        self.n
    }

    pub fn window(&self, phase: Phase) -> Option<PhaseWindow> {
        (self.n > 0).then_some(PhaseWindow {
            phase,
            start_ns: self.start,
            sent_end_ns: self.sent_end,
            requests_end_ns: self.end,
            scheduled: self.n,
            completed: self.n,
            errors: self.errors,
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
pub fn parse_line(line: &str) -> Result<EvidenceLine, serde_json::Error> {
    if line.starts_with(r#"{"line":"record","#) {
        return serde_json::from_str::<Record>(line).map(|r| EvidenceLine::Record(Box::new(r)));
    }
    serde_json::from_str(line)
}

/// Reads an evidence file line by line, so that a reader never holds more than one record:
/// the header first (checked), then every other line in order. A last line that is cut (a
/// crash while writing it) is ignored; any other bad line is an error naming the line.
pub struct EvidenceReader<R> {
    input: R,
    path: String,
    header: EvidenceHeader,
    /// Number of the line in `next` (1-based).
    line_no: usize,
    /// The next non-empty line, read ahead: only then is it known whether a bad line is
    /// the last one.
    next: Option<(String, bool)>,
}

impl<R: std::io::BufRead> EvidenceReader<R> {
    /// Reads the header line. `path` is only used in error messages.
    pub fn new(input: R, path: &str) -> Result<Self, EvidenceError> {
        let mut r = EvidenceReader {
            input,
            path: path.to_string(),
            header: EvidenceHeader {
                schema_version: 0,
                tool: String::new(),
                tool_version: String::new(),
                anchor_unix_ns: 0,
                benchmark_id: String::new(),
                endpoint_type: String::new(),
                streaming: false,
                tokenizer: String::new(),
                use_server_token_count: false,
                per_chunk_usage: false,
            },
            line_no: 0,
            next: None,
        };
        r.advance()?;
        let first = r.take_line()?;
        let Some((line_no, first)) = first else {
            return Err(EvidenceError::File {
                path: path.into(),
                message: "empty: no header line".into(),
            });
        };
        match first {
            EvidenceLine::Header(h) => {
                if h.schema_version > crate::record::EVIDENCE_SCHEMA_VERSION {
                    return Err(r.err(
                        line_no,
                        format!(
                            "evidence schema_version {} is newer than this inferbench reads ({})",
                            h.schema_version,
                            crate::record::EVIDENCE_SCHEMA_VERSION
                        ),
                    ));
                }
                r.header = h;
                Ok(r)
            }
            _ => Err(r.err(line_no, "the first line must be the header".into())),
        }
    }

    pub fn header(&self) -> &EvidenceHeader {
        &self.header
    }

    fn err(&self, line: usize, message: String) -> EvidenceError {
        EvidenceError::Line {
            path: self.path.clone(),
            line,
            message,
        }
    }

    /// Reads the next non-empty line into `self.next` (with whether it ended in a newline).
    fn advance(&mut self) -> Result<(), EvidenceError> {
        let mut buf = String::new();
        loop {
            buf.clear();
            let n = self
                .input
                .read_line(&mut buf)
                .map_err(|e| EvidenceError::File {
                    path: self.path.clone(),
                    message: format!("cannot read: {e}"),
                })?;
            if n == 0 {
                self.next = None;
                return Ok(());
            }
            self.line_no += 1;
            if buf.trim().is_empty() {
                continue;
            }
            let newline = buf.ends_with('\n');
            let text = buf.trim_end_matches(['\n', '\r']).to_string();
            self.next = Some((text, newline));
            return Ok(());
        }
    }

    /// The next parsed line with its number; None at the end (or at a cut last line).
    fn take_line(&mut self) -> Result<Option<(usize, EvidenceLine)>, EvidenceError> {
        let Some((text, newline)) = self.next.take() else {
            return Ok(None);
        };
        let line_no = self.line_no;
        self.advance()?;
        match parse_line(&text) {
            Ok(l) => Ok(Some((line_no, l))),
            // Only the very last line may be cut short by a crash mid-write.
            Err(_) if self.next.is_none() && !newline => Ok(None),
            Err(e) => Err(self.err(line_no, format!("not an evidence line: {e}"))),
        }
    }
}

impl<R: std::io::BufRead> Iterator for EvidenceReader<R> {
    type Item = Result<EvidenceLine, EvidenceError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.take_line() {
            Ok(Some((n, EvidenceLine::Header(_)))) => {
                Some(Err(self.err(n, "a second header line".into())))
            }
            Ok(Some((_, l))) => Some(Ok(l)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Parse an evidence file's text whole (`path` is only used in error messages), by the rules
/// of [`EvidenceReader`].
pub fn parse_evidence(path: &str, text: &str) -> Result<Evidence, EvidenceError> {
    let mut reader = EvidenceReader::new(text.as_bytes(), path)?;
    let mut records = Vec::new();
    let mut phases = Vec::new();
    let mut end = None;
    for line in &mut reader {
        match line? {
            EvidenceLine::Record(r) => records.push(*r),
            EvidenceLine::Phase(p) => phases.push(p),
            EvidenceLine::End(e) => end = Some(e),
            EvidenceLine::Header(_) => unreachable!("the reader refuses a second header"),
        }
    }
    Ok(Evidence {
        header: reader.header,
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
            per_chunk_usage: false,
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

    #[test]
    fn the_header_must_come_first_and_only_once() {
        let h = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
        let r = serde_json::to_string(&EvidenceLine::Record(Box::default())).unwrap();
        let err = parse_evidence("e", &format!("{r}\n{h}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "e:1: the first line must be the header");
        let err = parse_evidence("e", &format!("{h}\n\n{r}\n{h}\n"))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "e:4: a second header line");
        let err = parse_evidence("e", "\n\n").unwrap_err().to_string();
        assert_eq!(err, "e: empty: no header line");
    }

    #[test]
    fn streaming_gives_the_lines_in_order_without_the_header() {
        let h = serde_json::to_string(&EvidenceLine::Header(header())).unwrap();
        let r = serde_json::to_string(&EvidenceLine::Record(Box::default())).unwrap();
        let text = format!("{h}\n{r}\n{r}\n");
        let reader = EvidenceReader::new(text.as_bytes(), "x").unwrap();
        assert_eq!(reader.header().benchmark_id, "b");
        let lines: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| matches!(l, EvidenceLine::Record(_))));
    }
}
