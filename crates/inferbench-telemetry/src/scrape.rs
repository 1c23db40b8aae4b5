//! The raw scrape file, `inferbench_scrapes.jsonl`: a header line naming the targets, then
//! one line per scrape as it happened (every one kept, failed ones too), then an end line.
//! Every number the run reports about the server or its GPUs is computed from this file,
//! live and offline alike (docs/telemetry.md, "The raw scrape file").

use std::io::BufRead;

use serde::{Deserialize, Serialize};

pub const SCRAPES_FILE: &str = "inferbench_scrapes.jsonl";
pub const SCRAPES_SCHEMA_VERSION: u32 = 1;

/// What a target is: the inference server's Prometheus endpoint, or a DCGM exporter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Server,
    Gpu,
}

/// Where a target came from: AIPerf's default (the base URL's `/metrics`, DCGM on
/// localhost:9400/9401), a flag, or the built-in simulated server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetOrigin {
    Default,
    Flag,
    Simulated,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub index: u32,
    pub kind: TargetKind,
    pub origin: TargetOrigin,
    /// The URL scraped (credentials removed). A server target whose `/metrics` was not
    /// Prometheus text and that answered at `<base>/prometheus/metrics` (TRT-LLM) names the
    /// URL that answered.
    pub url: String,
    /// The configured interval between scrapes, ns.
    pub interval_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrapesHeader {
    pub schema_version: u32,
    /// The run's clock anchor (the evidence header's): every `*_ns` below is since it.
    pub anchor_unix_ns: u64,
    pub targets: Vec<TargetInfo>,
}

/// Why a scrape was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The first scrape, before any request.
    Start,
    Interval,
    /// Taken right before a phase's first request (`phase` names it).
    PhaseStart,
    /// Taken right after a phase's last response.
    PhaseEnd,
    /// The last scrape, after the engine stopped.
    End,
}

/// One scrape. Times are ns since the anchor on the run's monotonic clock: `send_ns` right
/// before the request was written, `first_byte_ns` when the response head arrived (the
/// sample time, as AIPerf's), `end_ns` when the body was read or the scrape failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScrapeLine {
    pub target: u32,
    /// Per target, from 0.
    pub seq: u64,
    pub trigger: Option<Trigger>,
    /// The phase this scrape belongs to (`warmup` or `profiling`): the one a `phase_start` /
    /// `phase_end` scrape names, otherwise the phase under way when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    pub send_ns: u64,
    pub first_byte_ns: Option<u64>,
    pub end_ns: u64,
    /// Wall clock at `first_byte_ns` (or `end_ns` when there was no response), ns since the
    /// Unix epoch: anchor + monotonic offset, so that it never steps.
    pub wall_unix_ns: u64,
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The body as text (decompressed). Absent when it was byte-identical to the previous
    /// scrape of the same target (`same_as` names that scrape's seq) or when the scrape failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_as: Option<u64>,
    /// Why there is no usable body: a transport error, a timeout, an HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrapesEnd {
    pub scrapes: u64,
    pub failed: u64,
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrapeFileLine {
    Header(ScrapesHeader),
    Scrape(ScrapeLine),
    End(ScrapesEnd),
}

/// The file read back. A run killed mid-write leaves a cut last line: it is ignored and
/// `complete` is false.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrapeLog {
    pub header: ScrapesHeader,
    pub scrapes: Vec<ScrapeLine>,
    pub end: Option<ScrapesEnd>,
}

impl ScrapeLog {
    pub fn complete(&self) -> bool {
        self.end.is_some()
    }

    /// The body of a scrape, following `same_as` to the scrape that carried it.
    pub fn body_of<'a>(&'a self, s: &'a ScrapeLine) -> Option<&'a str> {
        if let Some(b) = &s.body {
            return Some(b);
        }
        let seq = s.same_as?;
        self.scrapes
            .iter()
            .find(|o| o.target == s.target && o.seq == seq)
            .and_then(move |o| o.body.as_deref())
    }

    /// The scrapes of one target, in time order.
    pub fn of_target(&self, target: u32) -> impl Iterator<Item = &ScrapeLine> {
        self.scrapes.iter().filter(move |s| s.target == target)
    }
}

/// Reads the file. Errors name the line: `line N: ...`.
pub fn read_scrapes(r: impl BufRead) -> Result<ScrapeLog, String> {
    let mut header = None;
    let mut scrapes = Vec::new();
    let mut end = None;
    let mut lines = r.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let line = line.map_err(|e| format!("line {}: {e}", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: ScrapeFileLine = match serde_json::from_str(&line) {
            Ok(p) => p,
            // The last line of a killed run may be cut: ignore it.
            Err(_) if lines.peek().is_none() && header.is_some() => break,
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        };
        match parsed {
            ScrapeFileLine::Header(h) if header.is_none() && i == 0 => header = Some(h),
            ScrapeFileLine::Header(_) => {
                return Err(format!("line {}: a header line after the first", i + 1));
            }
            _ if header.is_none() => {
                return Err(format!("line {}: the first line is not the header", i + 1));
            }
            ScrapeFileLine::Scrape(s) => scrapes.push(s),
            ScrapeFileLine::End(e) => end = Some(e),
        }
    }
    let header = header.ok_or("the file is empty (no header line)")?;
    Ok(ScrapeLog {
        header,
        scrapes,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[ScrapeFileLine]) -> String {
        lines
            .iter()
            .map(|l| serde_json::to_string(l).unwrap() + "\n")
            .collect()
    }

    fn header() -> ScrapeFileLine {
        ScrapeFileLine::Header(ScrapesHeader {
            schema_version: 1,
            anchor_unix_ns: 5,
            targets: vec![],
        })
    }

    #[test]
    fn a_cut_last_line_is_ignored_and_same_as_follows_the_body() {
        let first = ScrapeLine {
            seq: 0,
            body: Some("a 1\n".into()),
            ..Default::default()
        };
        let second = ScrapeLine {
            seq: 1,
            same_as: Some(0),
            ..Default::default()
        };
        let mut t = text(&[
            header(),
            ScrapeFileLine::Scrape(first),
            ScrapeFileLine::Scrape(second),
        ]);
        t.push_str("{\"scrape\":{\"tar");
        let log = read_scrapes(t.as_bytes()).unwrap();
        assert_eq!(log.scrapes.len(), 2);
        assert!(!log.complete());
        assert_eq!(log.body_of(&log.scrapes[1]), Some("a 1\n"));
    }

    #[test]
    fn a_missing_header_is_an_error_naming_the_line() {
        let t = text(&[ScrapeFileLine::End(ScrapesEnd {
            scrapes: 0,
            failed: 0,
        })]);
        assert_eq!(
            read_scrapes(t.as_bytes()).unwrap_err(),
            "line 1: the first line is not the header"
        );
    }
}
