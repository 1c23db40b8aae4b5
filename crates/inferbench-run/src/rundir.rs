//! `RunDir`: the one type that knows the run-directory layouts — a single run, repeated runs
//! (`profile_runs/run_NNNN` with `aggregate/`), a sweep (cell directories with
//! `sweep_aggregate/`), or another tool's artifact directory — and reads our own files back
//! as types. Evidence is streamed, a line at a time.
//!
//! A ledger packet (`packets/sha256-…/`, `manifest.json` with `"schema":
//! "inferbench.packet/1"`) opens as the run it holds: an import's packet as that import
//! (its `import/` files), a packet of ours as a run whose evidence is `records.jsonl.zst`
//! (decompressed as read), whose manifest is `run_manifest.json` and whose other files are
//! the copies under `run/`. A packet is immutable: [`RunDir::writable`] refuses it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use inferbench_artifacts::FileNames;
use inferbench_artifacts::aggregate::{CONFIDENCE_JSON, SWEEP_JSON};
use inferbench_core::evidence::{EVIDENCE_FILE, EvidenceReader};
use inferbench_core::manifest::{MANIFEST_FILE, Manifest};
use inferbench_core::workload::Workload;
use inferbench_core::{Evidence, EvidenceHeader, EvidenceLine};
use inferbench_import::SourceTool;

use crate::Failure;
use crate::live::ClientResources;
use crate::side_files::CLIENT_RESOURCES;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One run of ours: its evidence file is here.
    Run,
    /// `--num-profile-runs`: `profile_runs/run_0001`, … and `aggregate/`.
    Repeated { runs: Vec<PathBuf> },
    /// A sweep's root: one directory per cell (each a run or repeated runs) and
    /// `sweep_aggregate/` (plus `aggregate/<cell>` with repeated runs).
    Sweep { cells: Vec<(String, PathBuf)> },
    /// A GenAI-Perf or AIPerf artifact directory, read through an importer.
    Imported(SourceTool),
}

#[derive(Clone, Debug)]
pub struct RunDir {
    pub path: PathBuf,
    pub layout: Layout,
    /// The run's file names (its `--profile-export-prefix`, read once from the manifest).
    names: FileNames,
    /// The packet directory when this run is read from a ledger packet.
    packet: Option<PathBuf>,
    /// Where the run's own files are: `path`, or a packet's `run/`.
    files: PathBuf,
}

/// A ledger packet's manifest (its `schema` is [`PACKET_SCHEMA`]).
pub const PACKET_MANIFEST: &str = "manifest.json";
pub const PACKET_SCHEMA: &str = "inferbench.packet/1";
/// The evidence file of a packet, zstd-compressed.
pub const PACKET_RECORDS: &str = "records.jsonl.zst";
/// A packet of our run: the run's `inferbench_manifest.json`, byte for byte.
pub const PACKET_RUN_MANIFEST: &str = "run_manifest.json";
/// A packet of our run: copies of the run files readers need (inputs, summary, client
/// resources), under their own names.
pub const PACKET_RUN_FILES: &str = "run";
/// A packet of an import: the original artifact files.
pub const PACKET_IMPORT: &str = "import";

/// One metric of a stored summary (`profile_export_aiperf.json`): its unit and every
/// statistic it has (`avg`, `p50`, …), in the file's order.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMetric {
    pub tag: String,
    pub unit: String,
    pub stats: Vec<(String, f64)>,
}

/// A summary file read back: the metrics, and the whole document for everything else.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSummary {
    pub metrics: Vec<StoredMetric>,
    pub document: serde_json::Value,
}

impl StoredSummary {
    pub fn from_json(document: serde_json::Value) -> StoredSummary {
        let mut metrics = Vec::new();
        if let Some(o) = document.as_object() {
            for (tag, v) in o {
                let Some(m) = v.as_object() else { continue };
                let Some(unit) = m.get("unit").and_then(|u| u.as_str()) else {
                    continue;
                };
                let stats = m
                    .iter()
                    .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                    .collect();
                metrics.push(StoredMetric {
                    tag: tag.clone(),
                    unit: unit.to_string(),
                    stats,
                });
            }
        }
        StoredSummary { metrics, document }
    }

    pub fn metric(&self, tag: &str) -> Option<&StoredMetric> {
        self.metrics.iter().find(|m| m.tag == tag)
    }
}

/// An aggregate file read back (`profile_export_aiperf_aggregate.json` or `_sweep.json`):
/// its metadata and, for each metric, its statistics across runs.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredAggregate {
    pub metadata: serde_json::Value,
    pub metrics: Vec<(String, serde_json::Value)>,
    pub document: serde_json::Value,
}

/// The evidence file, read a line at a time (a packet's decompressed as read).
pub type EvidenceStream = EvidenceReader<Box<dyn BufRead + Send>>;

fn read_json(path: &Path) -> Result<serde_json::Value, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// A packet's `records.jsonl.zst` (of our run or an import's rebuilt records), decompressed
/// as read.
pub fn packet_records(packet: &Path) -> Result<EvidenceStream, Failure> {
    let p = packet.join(PACKET_RECORDS);
    let f = std::fs::File::open(&p).map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    let dec = zstd::stream::read::Decoder::new(f)
        .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    let input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 16, dec));
    EvidenceReader::new(input, &p.display().to_string()).map_err(|e| Failure::input(e.to_string()))
}

/// A whole evidence stream, read into memory.
pub fn collect_evidence(mut s: EvidenceStream) -> Result<Evidence, Failure> {
    let mut ev = Evidence {
        header: s.header().clone(),
        records: Vec::new(),
        phases: Vec::new(),
        end: None,
    };
    for line in &mut s {
        match line.map_err(|e| Failure::input(e.to_string()))? {
            EvidenceLine::Record(r) => ev.records.push(*r),
            EvidenceLine::Phase(w) => ev.phases.push(w),
            EvidenceLine::End(e) => ev.end = Some(e),
            EvidenceLine::Header(_) => {}
        }
    }
    Ok(ev)
}

/// Whether `path` is a ledger packet: the schema of its `manifest.json`, and whether it is
/// an import's. None when it is not a packet.
fn packet_kind(path: &Path) -> Result<Option<bool>, Failure> {
    let m = path.join(PACKET_MANIFEST);
    if !m.is_file() {
        return Ok(None);
    }
    let Ok(doc) = read_json(&m) else {
        return Ok(None);
    };
    if doc["schema"] != PACKET_SCHEMA {
        return Ok(None);
    }
    let imported = doc["source"]["imported"]
        .as_bool()
        .ok_or_else(|| Failure::input(format!("{}: source.imported: missing", m.display())))?;
    Ok(Some(imported))
}

impl RunDir {
    /// A ledger packet as its run.
    fn open_packet(path: &Path, imported: bool) -> Result<RunDir, Failure> {
        if imported {
            let dir = path.join(PACKET_IMPORT);
            let Some(tool) = inferbench_import::detect(&dir) else {
                return Err(Failure::input(format!(
                    "{}: not a GenAI-Perf or AIPerf artifact directory (the packet's original files)",
                    dir.display()
                )));
            };
            return Ok(RunDir {
                path: dir.clone(),
                layout: Layout::Imported(tool),
                names: inferbench_artifacts::file_names("profile_export"),
                packet: Some(path.to_path_buf()),
                files: dir,
            });
        }
        let rm = path.join(PACKET_RUN_MANIFEST);
        if !rm.is_file() {
            return Err(Failure::input(format!(
                "{}: this packet predates {PACKET_RUN_MANIFEST} (written by an older `ledger add`): add the run again from its own directory to read it as a run",
                path.display()
            )));
        }
        if !path.join(PACKET_RECORDS).is_file() {
            return Err(Failure::input(format!(
                "{}: {PACKET_RECORDS} is absent (evidence kept outside the ledger): restore it to read the packet as a run",
                path.display()
            )));
        }
        let prefix = read_json(&rm)?["plan"]["artifacts"]["prefix"]
            .as_str()
            .map(str::to_string);
        Ok(RunDir {
            path: path.to_path_buf(),
            layout: Layout::Run,
            names: inferbench_artifacts::file_names(prefix.as_deref().unwrap_or("profile_export")),
            packet: Some(path.to_path_buf()),
            files: path.join(PACKET_RUN_FILES),
        })
    }

    /// The packet this run is read from, if any.
    pub fn packet(&self) -> Option<&Path> {
        self.packet.as_deref()
    }

    /// Refuses to write into a ledger packet (immutable: its digest is its id); `what`
    /// names the write in the message.
    pub fn writable(&self, what: &str) -> Result<(), Failure> {
        match &self.packet {
            Some(p) => Err(Failure::input(format!(
                "{}: a ledger packet is immutable: {what} would write into it",
                p.display()
            ))),
            None => Ok(()),
        }
    }

    /// Recognizes `path`'s layout; an error says what would have been accepted.
    pub fn open(path: &Path) -> Result<RunDir, Failure> {
        if let Some(imported) = packet_kind(path)? {
            return RunDir::open_packet(path, imported);
        }
        let layout = if inferbench_artifacts::has_evidence(path) {
            Layout::Run
        } else if path.join("profile_runs").is_dir() {
            Layout::Repeated {
                runs: run_dirs(&path.join("profile_runs")),
            }
        } else if path.join("sweep_aggregate").is_dir() {
            let cells = run_dirs(path)
                .into_iter()
                .filter(|p| {
                    inferbench_artifacts::has_evidence(p) || p.join("profile_runs").is_dir()
                })
                .map(|p| {
                    let name = p
                        .file_name()
                        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
                    (name, p)
                })
                .collect();
            Layout::Sweep { cells }
        } else if path.join(MANIFEST_FILE).is_file() {
            // Our run that lost its evidence: not an import, whatever else the files look like.
            return Err(Failure::input(format!(
                "{}: {EVIDENCE_FILE} is missing: the run's manifest is here but not its raw evidence",
                path.display()
            )));
        } else if let Some(tool) = inferbench_import::detect(path) {
            Layout::Imported(tool)
        } else if !path.is_dir() {
            return Err(Failure::input(format!(
                "{}: no such directory",
                path.display()
            )));
        } else {
            return Err(Failure::input(format!(
                "{}: no {EVIDENCE_FILE} here, and not a GenAI-Perf or AIPerf artifact directory; give a run directory written by `inferbench profile`, or a GenAI-Perf or AIPerf artifact directory",
                path.display()
            )));
        };
        let prefix = match layout {
            Layout::Run => read_json(&path.join(MANIFEST_FILE)).ok().and_then(|m| {
                m["plan"]["artifacts"]["prefix"]
                    .as_str()
                    .map(str::to_string)
            }),
            _ => None,
        };
        Ok(RunDir {
            path: path.to_path_buf(),
            layout,
            names: inferbench_artifacts::file_names(prefix.as_deref().unwrap_or("profile_export")),
            packet: None,
            files: path.to_path_buf(),
        })
    }

    /// This directory as one run, or an error that names the runs below it.
    pub fn single(path: &Path) -> Result<RunDir, Failure> {
        let d = RunDir::open(path)?;
        match &d.layout {
            Layout::Run | Layout::Imported(_) => Ok(d),
            Layout::Repeated { .. } | Layout::Sweep { .. } => Err(Failure::input(format!(
                "{}: this is the root of repeated runs or a sweep: give one run's directory, e.g. {}",
                path.display(),
                d.runs()
                    .first()
                    .and_then(|r| r
                        .path
                        .strip_prefix(path)
                        .ok()
                        .map(|p| p.display().to_string()))
                    .unwrap_or_else(|| "profile_runs/run_0001 or concurrency_4".into())
            ))),
        }
    }

    /// Every single run at or below this directory, in order.
    pub fn runs(&self) -> Vec<RunDir> {
        match &self.layout {
            Layout::Run | Layout::Imported(_) => vec![self.clone()],
            Layout::Repeated { runs } => runs
                .iter()
                .filter_map(|p| RunDir::open(p).ok())
                .filter(|d| d.layout == Layout::Run)
                .collect(),
            Layout::Sweep { cells } => cells
                .iter()
                .filter_map(|(_, p)| RunDir::open(p).ok())
                .flat_map(|d| d.runs())
                .collect(),
        }
    }

    pub fn manifest(&self) -> Result<Manifest, Failure> {
        let p = match &self.packet {
            Some(pk) if self.layout == Layout::Run => pk.join(PACKET_RUN_MANIFEST),
            _ => self.path.join(MANIFEST_FILE),
        };
        let text = std::fs::read_to_string(&p)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| Failure::input(format!("{}: not a manifest: {e}", p.display())))
    }

    /// The file names of this run (its `--profile-export-prefix`, from the manifest).
    pub fn names(&self) -> &FileNames {
        &self.names
    }

    /// The evidence, streamed: the header is read (and checked) now, the lines as iterated.
    pub fn evidence(&self) -> Result<EvidenceStream, Failure> {
        if self.packet.is_some() && self.layout == Layout::Run {
            return packet_records(&self.path);
        }
        let p = inferbench_artifacts::evidence_file_in(&self.path)
            .unwrap_or_else(|| self.path.join(EVIDENCE_FILE));
        let input = inferbench_artifacts::open_evidence(&p)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        EvidenceReader::new(input, &p.display().to_string())
            .map_err(|e| Failure::input(e.to_string()))
    }

    /// The evidence header alone.
    pub fn evidence_header(&self) -> Result<EvidenceHeader, Failure> {
        Ok(self.evidence()?.header().clone())
    }

    /// The whole evidence, for the definition sets that score a run as a whole.
    pub fn load_evidence(&self) -> Result<Evidence, Failure> {
        collect_evidence(self.evidence()?)
    }

    /// `inputs.json` as written.
    pub fn inputs(&self) -> Result<serde_json::Value, Failure> {
        read_json(&self.files.join(&self.names().inputs_json))
    }

    /// The frozen workload back from `inputs.json` (its bodies, compact, in order).
    pub fn workload(&self) -> Result<Workload, Failure> {
        let p = self.files.join(&self.names().inputs_json);
        let text = std::fs::read_to_string(&p)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        let sessions = inferbench_core::inputs_json::read_aiperf(&text)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        Ok(inferbench_core::inputs_json::aiperf_workload(&sessions))
    }

    /// `profile_export_aiperf.json` (None when the run has not written it).
    pub fn summary(&self) -> Result<Option<StoredSummary>, Failure> {
        let p = self.files.join(&self.names().summary_json);
        if !p.is_file() {
            return Ok(None);
        }
        Ok(Some(StoredSummary::from_json(read_json(&p)?)))
    }

    /// The client's resources side file (None when absent).
    pub fn client_resources(&self) -> Result<Option<ClientResources>, Failure> {
        let p = self.files.join(CLIENT_RESOURCES);
        if !p.is_file() {
            return Ok(None);
        }
        serde_json::from_value(read_json(&p)?)
            .map(Some)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))
    }

    /// The confidence aggregate of repeated runs (`aggregate/`), or a sweep's
    /// `sweep_aggregate/` file; None when there is none.
    pub fn aggregate(&self) -> Result<Option<StoredAggregate>, Failure> {
        let p = match &self.layout {
            Layout::Repeated { .. } => self.path.join("aggregate").join(CONFIDENCE_JSON),
            Layout::Sweep { .. } => self.path.join("sweep_aggregate").join(SWEEP_JSON),
            _ => return Ok(None),
        };
        if !p.is_file() {
            return Ok(None);
        }
        let document = read_json(&p)?;
        let metrics_key = if document.get("metrics").is_some() {
            "metrics"
        } else {
            "per_combination_metrics"
        };
        let metrics = match document.get(metrics_key) {
            Some(serde_json::Value::Object(o)) => {
                o.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
            }
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v.clone()))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Some(StoredAggregate {
            metadata: document.get("metadata").cloned().unwrap_or_default(),
            metrics,
            document,
        }))
    }
}

#[cfg(test)]
#[path = "rundir_tests.rs"]
mod tests;
