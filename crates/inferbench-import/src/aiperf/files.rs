//! The files of an AIPerf run directory other than the per-request ones: which files are
//! there, the summary, the phase windows (from `logs/aiperf.log`, `phase_manifest.json` or the
//! summary's `start_time`/`end_time`) and `inputs.json`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use inferbench_core::Phase;
use inferbench_core::inputs_json::{self, InputsJson, InputsJsonError};
use serde_json::Value;

use super::json::At;
use crate::ImportError;

/// The files of one run, by role. `prefix` is `--profile-export-file`'s stem
/// (`profile_export` by default).
#[derive(Clone, Debug)]
pub(super) struct RunFiles {
    pub dir: PathBuf,
    pub records: Option<PathBuf>,
    pub raw: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    pub inputs: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub phase_manifest: Option<PathBuf>,
    pub results_ready: Option<PathBuf>,
}

fn existing(p: PathBuf) -> Option<PathBuf> {
    p.is_file().then_some(p)
}

/// The export prefix used in `dir`: the stem of a `<prefix>_aiperf.json`, else the stem of a
/// `<prefix>_raw.jsonl`, else `profile_export`.
fn prefix_in(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    // The default name wins when several prefixes are present.
    for suffix in ["_aiperf.json", "_raw.jsonl"] {
        let stems: Vec<&str> = names
            .iter()
            .filter_map(|n| n.strip_suffix(suffix))
            .collect();
        if stems.contains(&"profile_export") {
            return "profile_export".into();
        }
        if let Some(s) = stems.first() {
            return (*s).to_string();
        }
    }
    "profile_export".into()
}

impl RunFiles {
    /// The AIPerf files directly in `dir`, if it holds a per-request file or a summary.
    pub fn in_dir(dir: &Path) -> Option<RunFiles> {
        let prefix = prefix_in(dir);
        let f = RunFiles {
            dir: dir.to_path_buf(),
            records: existing(dir.join(format!("{prefix}.jsonl"))),
            raw: existing(dir.join(format!("{prefix}_raw.jsonl"))),
            summary: existing(dir.join(format!("{prefix}_aiperf.json"))),
            inputs: existing(dir.join("inputs.json")),
            log: existing(dir.join("logs").join("aiperf.log")),
            phase_manifest: existing(dir.join("phase_manifest.json")),
            results_ready: existing(dir.join(".aiperf_results_ready.json")),
        };
        (f.records.is_some() || f.raw.is_some() || f.summary.is_some()).then_some(f)
    }

    /// `dir` itself, or its only subdirectory that holds a run (AIPerf nests a run under a
    /// folder named after the model, endpoint and load when the artifact directory is left
    /// at its default).
    pub fn find(dir: &Path) -> Option<RunFiles> {
        if let Some(f) = RunFiles::in_dir(dir) {
            return Some(f);
        }
        let mut found: Vec<RunFiles> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| RunFiles::in_dir(&e.path()))
            .collect();
        if found.len() == 1 { found.pop() } else { None }
    }
}

pub(super) fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|e| ImportError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

pub(super) fn read_json(path: &Path) -> Result<Value, ImportError> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| At::file(path).err("", format!("not JSON: {e}")))
}

/// A phase's issuing window in wall-clock ns, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct WallWindow {
    pub phase: Phase,
    pub start_ns: u64,
    pub sent_end_ns: Option<u64>,
    pub requests_end_ns: u64,
    pub expected: Option<u64>,
    pub cancelled: bool,
}

/// `name=value` inside a Python repr such as `PhaseRecordsStats(phase=..., start_ns=1, ...)`;
/// the name must start a field (after `(` or `, `), so `start_ns` does not match
/// `baseline_start_ns`.
fn repr_field<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    for sep in ["(", ", "] {
        let key = format!("{sep}{name}=");
        if let Some(i) = s.find(&key) {
            let rest = &s[i + key.len()..];
            let end = rest.find([',', ')']).unwrap_or(rest.len());
            return Some(rest[..end].trim());
        }
    }
    None
}

/// The phase windows printed in `logs/aiperf.log` (`Phase complete: PhaseRecordsStats(...)`),
/// exact to the ns. The last line of a phase wins.
pub(super) fn windows_from_log(text: &str) -> Vec<WallWindow> {
    let mut out: Vec<WallWindow> = Vec::new();
    for line in text.lines() {
        let Some(i) = line.find("PhaseRecordsStats(") else {
            continue;
        };
        let s = &line[i + "PhaseRecordsStats".len()..];
        let phase = match repr_field(s, "phase").map(str::to_ascii_lowercase) {
            Some(p) if p.ends_with("profiling") => Phase::Profiling,
            Some(p) if p.ends_with("warmup") => Phase::Warmup,
            _ => continue,
        };
        let num = |name: &str| repr_field(s, name).and_then(|v| v.parse::<u64>().ok());
        let (Some(start_ns), Some(requests_end_ns)) = (num("start_ns"), num("requests_end_ns"))
        else {
            continue;
        };
        let w = WallWindow {
            phase,
            start_ns,
            sent_end_ns: num("sent_end_ns"),
            requests_end_ns,
            expected: num("total_expected_requests"),
            cancelled: repr_field(s, "was_cancelled") == Some("True"),
        };
        out.retain(|o| o.phase != phase);
        out.push(w);
    }
    out
}

/// Windows from `phase_manifest.json` (`phases[].{phase_kind, start_ns, end_ns}`).
pub(super) fn windows_from_phase_manifest(v: &Value) -> Vec<WallWindow> {
    let mut out = Vec::new();
    for p in v
        .get("phases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let phase = match p.get("phase_kind").and_then(Value::as_str) {
            Some("profiling") => Phase::Profiling,
            Some("warmup") => Phase::Warmup,
            _ => continue,
        };
        let (Some(start_ns), Some(end_ns)) = (
            p.get("start_ns").and_then(Value::as_u64),
            p.get("end_ns").and_then(Value::as_u64),
        ) else {
            continue;
        };
        out.retain(|o: &WallWindow| o.phase != phase);
        out.push(WallWindow {
            phase,
            start_ns,
            sent_end_ns: None,
            requests_end_ns: end_ns,
            expected: p.get("total_request_count").and_then(Value::as_u64),
            cancelled: p
                .get("was_cancelled")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        });
    }
    out
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// AIPerf's naive UTC ISO time (`2026-11-29T18:58:04.962456`, fraction optional) as Unix ns.
pub(super) fn parse_iso_utc(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.splitn(3, '-');
    let y: i64 = d.next()?.parse().ok()?;
    let mo: u32 = d.next()?.parse().ok()?;
    let day: u32 = d.next()?.parse().ok()?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) {
        return None;
    }
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, b),
        None => (time, ""),
    };
    let mut t = hms.splitn(3, ':');
    let h: u64 = t.next()?.parse().ok()?;
    let mi: u64 = t.next()?.parse().ok()?;
    let sec: u64 = t.next()?.parse().ok()?;
    if h > 23 || mi > 59 || sec > 60 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32)
    };
    let days = u64::try_from(days_from_civil(y, mo, day)).ok()?;
    days.checked_mul(86_400)?
        .checked_add(h * 3600 + mi * 60 + sec)?
        .checked_mul(1_000_000_000)?
        .checked_add(frac_ns)
}

/// The profiling window from the summary's `start_time`/`end_time` (µs).
pub(super) fn window_from_summary(summary: &Value) -> Option<WallWindow> {
    let start = parse_iso_utc(summary.get("start_time")?.as_str()?)?;
    let end = parse_iso_utc(summary.get("end_time")?.as_str()?)?;
    (end > start).then_some(WallWindow {
        phase: Phase::Profiling,
        start_ns: start,
        sent_end_ns: None,
        requests_end_ns: end,
        expected: None,
        cancelled: summary.get("was_cancelled").and_then(Value::as_bool) == Some(true),
    })
}

/// `inputs.json`: each payload with its position in file order, by (session id, turn index).
pub(super) struct Inputs {
    pub by_turn: HashMap<(String, u32), (u64, Value)>,
}

/// Reads `inputs.json` with core's reader. AIPerf writes `payloads`; a file written with
/// GenAI-Perf's name `payload` is read too, each entry's bodies its turns.
pub(super) fn read_inputs(path: &Path) -> Result<Inputs, ImportError> {
    let at = At::file(path);
    let read = inputs_json::read(&read_text(path)?).map_err(|e| match e {
        InputsJsonError::Syntax { message, .. } => at.err("", format!("not JSON: {message}")),
        InputsJsonError::Field { path, message } => at.err(&path, message),
    })?;
    // (session id, turns) per entry, in file order.
    type Bodies = Vec<serde_json::Map<String, Value>>;
    let sessions: Vec<(Option<String>, Bodies)> = match read {
        InputsJson::Aiperf(s) => s.into_iter().map(|s| (s.session_id, s.payloads)).collect(),
        InputsJson::GenaiPerf(e) => e
            .into_iter()
            .map(|e| {
                let sid = e.turns.first().and_then(|t| t.session_id.clone());
                (sid, e.turns.into_iter().map(|t| t.body).collect())
            })
            .collect(),
    };
    let mut by_turn = HashMap::new();
    let mut index = 0u64;
    for (i, (sid, turns)) in sessions.into_iter().enumerate() {
        let sid =
            sid.ok_or_else(|| at.err(&format!("data[{i}].session_id"), "expected a string"))?;
        for (turn, body) in turns.into_iter().enumerate() {
            let turn = u32::try_from(turn).unwrap_or(u32::MAX);
            by_turn.insert((sid.clone(), turn), (index, Value::Object(body)));
            index += 1;
        }
    }
    Ok(Inputs { by_turn })
}

/// Whether the run counted tokens from the server's `usage` (`--use-server-token-count`):
/// the flag on the recorded command line, or a `use_server_token_count: true` anywhere in
/// `input_config`.
pub(super) fn server_token_count(summary: &Value) -> bool {
    run_flag(
        summary,
        "use_server_token_count",
        "--use-server-token-count",
    )
}

/// Whether the run had `--per-chunk-usage` (ITL's first-chunk count then comes from the
/// first content chunk's usage): the flag on the recorded command line, or a
/// `per_chunk_usage: true` anywhere in `input_config`.
pub(super) fn per_chunk_usage(summary: &Value) -> bool {
    run_flag(summary, "per_chunk_usage", "--per-chunk-usage")
}

/// A boolean run setting: `flag` on the recorded command line, or `key: true` anywhere in
/// `input_config`.
fn run_flag(summary: &Value, key: &str, flag: &str) -> bool {
    fn any_true(v: &Value, key: &str) -> bool {
        match v {
            Value::Object(o) => o
                .iter()
                .any(|(k, v)| (k == key && v.as_bool() == Some(true)) || any_true(v, key)),
            Value::Array(a) => a.iter().any(|v| any_true(v, key)),
            _ => false,
        }
    }
    let cli = summary
        .pointer("/run_info/cli_command")
        .and_then(Value::as_str)
        .unwrap_or("");
    let on_cli = cli.contains(flag);
    on_cli
        || summary
            .get("input_config")
            .is_some_and(|c| any_true(c, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_parse_to_unix_ns() {
        // 1970-01-02T00:00:01.5 = 86_401.5 s.
        assert_eq!(
            parse_iso_utc("1970-01-02T00:00:01.5"),
            Some(86_401_500_000_000)
        );
        // 2000-03-01: 11_017 days after the epoch (30 years, 7 leap days, Jan + Feb 2000).
        assert_eq!(
            parse_iso_utc("2000-03-01T00:00:00"),
            Some(11_017 * 86_400 * 1_000_000_000)
        );
        assert_eq!(
            parse_iso_utc("2026-11-29T18:58:04.962456"),
            Some(1_795_978_684_962_456_000)
        );
        for bad in [
            "",
            "2026-13-01T00:00:00",
            "2026-11-29",
            "x-1-1T0:0:0",
            "2026-11-29T1:2:3.x",
        ] {
            assert_eq!(parse_iso_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn log_windows_take_the_field_not_its_suffix() {
        let log = "x - INFO - Phase complete: PhaseRecordsStats(phase=CreditPhase.PROFILING, \
                   phase_index=0, start_ns=100, sent_end_ns=150, requests_end_ns=200, \
                   baseline_start_ns=99, baseline_end_ns=201, total_expected_requests=4, \
                   was_cancelled=False, success_records=3)\n\
                   y - PhaseRecordsStats(phase=CreditPhase.WARMUP, start_ns=1, requests_end_ns=None)";
        let w = windows_from_log(log);
        assert_eq!(
            w,
            vec![WallWindow {
                phase: Phase::Profiling,
                start_ns: 100,
                sent_end_ns: Some(150),
                requests_end_ns: 200,
                expected: Some(4),
                cancelled: false,
            }]
        );
    }
}
