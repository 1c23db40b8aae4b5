//! File names of a run directory, with AIPerf's `--profile-export-prefix` semantics.

/// The default `--profile-export-prefix`.
pub const DEFAULT_PREFIX: &str = "profile_export";

/// Names (relative to the run directory) of every file inferbench writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileNames {
    /// Per-record export (`--export-level records` and `raw`).
    pub records_jsonl: String,
    /// Raw request/response export (`--export-level raw`).
    pub raw_jsonl: String,
    pub summary_json: String,
    pub summary_csv: String,
    pub console_txt: String,
    pub inputs_json: String,
    pub results_ready: String,
    pub manifest: String,
    pub evidence: String,
}

/// File names for `prefix`. The default prefix gives AIPerf's default names
/// (`profile_export.jsonl`, `profile_export_raw.jsonl`, `profile_export_aiperf.json`,
/// `profile_export_aiperf.csv`, `profile_export_console.txt`). Any other prefix renames
/// every file as AIPerf's reference (§1.11) states: `foo.jsonl`, `foo_raw.jsonl`, `foo.json`,
/// `foo.csv`, and `foo_console.txt`. A trailing `.json`, `.jsonl` or `.csv` on the prefix is
/// dropped (the flag's old alias `--profile-export-file` took a file name).
pub fn file_names(prefix: &str) -> FileNames {
    let mut p = prefix.trim();
    for ext in [".jsonl", ".json", ".csv"] {
        if let Some(stripped) = p.strip_suffix(ext) {
            p = stripped;
            break;
        }
    }
    if p.is_empty() {
        p = DEFAULT_PREFIX;
    }
    let (json, csv) = if p == DEFAULT_PREFIX {
        (format!("{p}_aiperf.json"), format!("{p}_aiperf.csv"))
    } else {
        (format!("{p}.json"), format!("{p}.csv"))
    };
    FileNames {
        records_jsonl: format!("{p}.jsonl"),
        raw_jsonl: format!("{p}_raw.jsonl"),
        summary_json: json,
        summary_csv: csv,
        console_txt: format!("{p}_console.txt"),
        inputs_json: "inputs.json".into(),
        results_ready: ".aiperf_results_ready.json".into(),
        manifest: inferbench_core::manifest::MANIFEST_FILE.into(),
        evidence: inferbench_core::evidence::EVIDENCE_FILE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_prefix_gives_aiperf_default_names() {
        let n = file_names("profile_export");
        assert_eq!(n.records_jsonl, "profile_export.jsonl");
        assert_eq!(n.raw_jsonl, "profile_export_raw.jsonl");
        assert_eq!(n.summary_json, "profile_export_aiperf.json");
        assert_eq!(n.summary_csv, "profile_export_aiperf.csv");
        assert_eq!(n.console_txt, "profile_export_console.txt");
        assert_eq!(n.results_ready, ".aiperf_results_ready.json");
        assert_eq!(file_names(""), n);
    }

    #[test]
    fn custom_prefix_renames_every_file() {
        let n = file_names("foo");
        assert_eq!(n.records_jsonl, "foo.jsonl");
        assert_eq!(n.raw_jsonl, "foo_raw.jsonl");
        assert_eq!(n.summary_json, "foo.json");
        assert_eq!(n.summary_csv, "foo.csv");
        assert_eq!(n.console_txt, "foo_console.txt");
        assert_eq!(file_names("foo.json"), n);
        assert_eq!(n.inputs_json, "inputs.json");
    }
}
