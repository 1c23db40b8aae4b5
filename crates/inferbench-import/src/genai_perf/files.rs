//! Which files a GenAI-Perf run has, and which release wrote them.

use super::*;

/// The files of one GenAI-Perf run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFiles {
    pub dir: PathBuf,
    /// Perf Analyzer's export (`profile_export.json`, or `X.json` next to `X_genai_perf.json`).
    pub export: PathBuf,
    pub summary_json: Option<PathBuf>,
    pub summary_csv: Option<PathBuf>,
    pub inputs: Option<PathBuf>,
}

pub(super) fn files_in(dir: &Path) -> Option<RunFiles> {
    let mut stem = None;
    if dir.join(PA_EXPORT).is_file() {
        stem = Some("profile_export".to_string());
    } else if let Ok(entries) = std::fs::read_dir(dir) {
        // A renamed export: find `X_genai_perf.json` whose `X.json` exists.
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        stem = names.iter().find_map(|n| {
            let s = n.strip_suffix(".json")?.strip_suffix(SUMMARY_SUFFIX)?;
            dir.join(format!("{s}.json"))
                .is_file()
                .then(|| s.to_string())
        });
    }
    let stem = stem?;
    let opt = |p: PathBuf| p.is_file().then_some(p);
    Some(RunFiles {
        dir: dir.to_path_buf(),
        export: dir.join(format!("{stem}.json")),
        summary_json: opt(dir.join(format!("{stem}{SUMMARY_SUFFIX}.json"))),
        summary_csv: opt(dir.join(format!("{stem}{SUMMARY_SUFFIX}.csv"))),
        inputs: opt(dir.join("inputs.json")),
    })
}

/// The run's files in `dir`, or in its single subfolder holding a run (GenAI-Perf's
/// `<model>-openai-chat-concurrency4/`).
pub fn locate(dir: &Path) -> Option<RunFiles> {
    if let Some(f) = files_in(dir) {
        return Some(f);
    }
    let mut found = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| files_in(&p));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// True when `dir` (or its single run subfolder) holds this tool's artifacts.
pub fn looks_like(dir: &Path) -> bool {
    locate(dir).is_some()
}

/// The GenAI-Perf release that wrote a run, as far as its files tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetectedVersion {
    /// A release (`0.0.12`), a range the files cannot split (`0.0.15-0.0.16`), or `unknown`.
    pub version: String,
    /// The definition set that reproduces that release's numbers.
    pub set: &'static str,
    /// Caveats of the detection, for `losses`.
    pub notes: Vec<String>,
}

pub(super) fn detected(version: &str, set: &'static str) -> DetectedVersion {
    DetectedVersion {
        version: version.to_string(),
        set,
        notes: Vec::new(),
    }
}

/// Reads the release from the summary JSON (metric keys, `input_config` shape and keys) or,
/// without it, from the CSV (header and row names). Rules in `docs/definitions/genai-perf.md`.
pub fn detect_version(summary: Option<&Value>, csv: Option<&str>) -> DetectedVersion {
    if let Some(s) = summary.and_then(Value::as_object) {
        let has_p1 = s.values().any(|m| m.get("p1").is_some());
        if s.contains_key("output_token_throughput_per_user") || has_p1 {
            return if has_p1 {
                detected("0.0.15-0.0.16", SET_0_0_13)
            } else {
                detected("0.0.13-0.0.14", SET_0_0_13)
            };
        }
        if s.contains_key("num_output_token") || s.contains_key("num_input_token") {
            let mut d = detected("0.0.1-0.0.3", SET_0_0_1);
            d.notes.push(
                "`num_output_token` marks a build from before mid-June 2024; ITL v1 assumed, \
                 though builds from 6 to 14 June 2024 already used ITL v2"
                    .into(),
            );
            return d;
        }
        let cfg = s.get("input_config").and_then(Value::as_object);
        let nested = cfg.is_some_and(|c| c.contains_key("model_names"));
        if nested {
            return detected("0.0.13-0.0.14", SET_0_0_13);
        }
        if let Some(c) = cfg {
            if c.contains_key("num_sessions") {
                return detected("0.0.12", SET_0_0_10);
            }
            if c.contains_key("header") {
                return detected("0.0.10-0.0.11", SET_0_0_10);
            }
            if c.contains_key("request_count") {
                return detected("0.0.9", SET_0_0_4);
            }
        }
        if s.contains_key("time_to_second_token") || s.contains_key("request_count") {
            return detected("0.0.10-0.0.12", SET_0_0_10);
        }
        let unit_bug = s
            .get("output_sequence_length")
            .and_then(|m| m.get("unit"))
            .and_then(Value::as_str)
            == Some("requests/sec");
        return if unit_bug {
            detected("0.0.8", SET_0_0_4)
        } else {
            detected("0.0.4-0.0.8", SET_0_0_4)
        };
    }
    if let Some(csv) = csv {
        let header = csv.lines().next().unwrap_or("").trim_end();
        if header.ends_with(",p1") {
            return detected("0.0.15-0.0.16", SET_0_0_13);
        }
        if csv.contains("(tokens/sec)") || csv.contains("Per User") {
            return detected("0.0.13-0.0.14", SET_0_0_13);
        }
        if csv.contains("Request Count") {
            return detected("0.0.10-0.0.12", SET_0_0_10);
        }
        return detected("0.0.4-0.0.9", SET_0_0_4);
    }
    let mut d = detected("unknown", SET_0_0_13);
    d.notes.push(
        "no profile_export_genai_perf.json or .csv: the GenAI-Perf release is unknown; the \
         newest definitions (genai-perf-0.0.13) are assumed"
            .into(),
    );
    d
}

/// The first release of a detected version or range (`0.0.10-0.0.11` → 10).
pub(super) fn minor(version: &str) -> Option<u32> {
    version
        .split('-')
        .next()?
        .strip_prefix("0.0.")?
        .parse()
        .ok()
}
