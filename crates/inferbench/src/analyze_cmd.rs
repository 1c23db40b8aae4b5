//! `inferbench analyze swim-lane DIR...` and `inferbench analyze turn-messages DIR...`, as
//! AIPerf 0.13's `aiperf analyze` helpers: a swim-lane PNG (and viewer page) from the
//! per-record export, and a turn-messages HTML page from the raw export. The work is in
//! `inferbench_report::{swim_lane, swim_lane_draw, turn_messages}`; this file finds the
//! files, writes the outputs and reports.
//!
//! Exit codes as AIPerf: 0 every run drawn; 1 a run was skipped (`skip DIR: reason` on
//! stderr, the other runs still drawn); 2 usage (`--out` with several directories).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use inferbench_report::{swim_lane, swim_lane_draw, turn_messages};
use inferbench_run::Failure;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(subcommand)]
    pub command: AnalyzeCommand,
}

#[derive(Subcommand, Debug)]
pub enum AnalyzeCommand {
    /// A swim-lane PNG of each run: one lane per concurrent session slot, a bar per request
    /// (the wait for the first token shaded), and requests in flight and idle sessions over
    /// time underneath (docs/reports.md).
    SwimLane(SwimLaneArgs),
    /// A collapsible HTML page of the messages each turn sent (conversation → turn →
    /// message), from the raw export (`--export-level raw`).
    TurnMessages(TurnMessagesArgs),
}

#[derive(Args, Debug)]
pub struct SwimLaneArgs {
    /// Run directories, each with profile_export.jsonl.
    #[arg(required = true, value_name = "RUN_DIR")]
    pub run_dirs: Vec<PathBuf>,
    /// The PNG to write (default RUN_DIR/swim_lane.png); only with one run directory.
    #[arg(short = 'o', long = "out", value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Draw this target concurrency as a horizontal line in the concurrency panel.
    #[arg(short = 'c', long = "concurrency", value_name = "N")]
    pub concurrency: Option<u64>,
    /// Ramp duration in seconds for the ramp-done line (instead of the run's
    /// profile_export_aiperf.json).
    #[arg(long = "ramp", value_name = "SECONDS")]
    pub ramp: Option<f64>,
    /// Also write the interactive viewer: swim_lane.html, or --out with an .html suffix.
    #[arg(long = "html")]
    pub html: bool,
}

#[derive(Args, Debug)]
pub struct TurnMessagesArgs {
    /// Run directories with profile_export_raw.jsonl or raw_records/*.jsonl (or a raw
    /// jsonl file itself).
    #[arg(required = true, value_name = "RUN_DIR")]
    pub run_dirs: Vec<PathBuf>,
    /// The HTML file to write (default RUN_DIR/turn_messages.html); only with one run
    /// directory.
    #[arg(short = 'o', long = "out", value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// At most this many conversations (roots first, then by earliest request).
    #[arg(short = 'n', long = "limit-conversations", default_value_t = 40)]
    pub limit_conversations: usize,
    /// At most this many turns a conversation; the rest are counted.
    #[arg(long = "max-turns", default_value_t = 60)]
    pub max_turns: usize,
    /// At most this many characters of each distinct message body.
    #[arg(long = "content-cap", default_value_t = 8000)]
    pub content_cap: usize,
}

pub fn run(a: &AnalyzeArgs) -> Result<u8, Failure> {
    match &a.command {
        AnalyzeCommand::SwimLane(a) => each(&a.run_dirs, a.out.is_some(), |d| swim(a, d)),
        AnalyzeCommand::TurnMessages(a) => each(&a.run_dirs, a.out.is_some(), |d| turns(a, d)),
    }
}

/// Runs `draw` on every directory: its saved lines on stdout, a failure as a skip line.
fn each(
    dirs: &[PathBuf],
    out_given: bool,
    draw: impl Fn(&Path) -> Result<Vec<String>, String>,
) -> Result<u8, Failure> {
    if out_given && dirs.len() > 1 {
        return Err(Failure::input("--out only valid with a single run dir"));
    }
    let mut skipped = 0;
    for d in dirs {
        match draw(d) {
            Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
            Err(e) => {
                eprintln!("skip {}: {e}", d.display());
                skipped += 1;
            }
        }
    }
    Ok(if skipped > 0 { 1 } else { 0 })
}

fn read(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn write(p: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = p.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("failed to write {}: {e}", p.display()))?;
    }
    std::fs::write(p, bytes).map_err(|e| format!("failed to write {}: {e}", p.display()))
}

fn dir_name(d: &Path) -> String {
    let d = std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
    d.file_name().map_or_else(
        || d.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn swim(a: &SwimLaneArgs, dir: &Path) -> Result<Vec<String>, String> {
    let jsonl = dir.join("profile_export.jsonl");
    if !jsonl.is_file() {
        return Err(format!("{} not found", jsonl.display()));
    }
    let requests = swim_lane::parse_records(&read(&jsonl)?, &jsonl.display().to_string())?;
    let summary = dir.join("profile_export_aiperf.json");
    let mut marks = if summary.is_file() {
        let doc = serde_json::from_str(&read(&summary)?)
            .map_err(|e| format!("{}: {e}", summary.display()))?;
        swim_lane::marks(&doc)
    } else {
        swim_lane::Marks::default()
    };
    if a.ramp.is_some() {
        marks.ramp_s = a.ramp;
    }
    let lane = swim_lane::build(&dir_name(dir), requests, a.concurrency, marks)
        .ok_or_else(|| format!("no valid records in {}", jsonl.display()))?;
    let png = a.out.clone().unwrap_or_else(|| dir.join("swim_lane.png"));
    write(&png, &swim_lane_draw::png(&lane))?;
    let mut saved = vec![format!("saved {}", png.display())];
    if a.html {
        let page = match &a.out {
            Some(o) => o.with_extension("html"),
            None => dir.join("swim_lane.html"),
        };
        write(&page, swim_lane_draw::html(&lane).as_bytes())?;
        saved.push(format!("saved {}", page.display()));
    }
    Ok(saved)
}

/// The raw export's files: a file given directly, else `raw_records/*.jsonl` (sorted),
/// else `profile_export_raw.jsonl`. Nested run trees are not searched: that would merge
/// separate benchmarks into one page.
fn raw_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut shards: Vec<PathBuf> = std::fs::read_dir(dir.join("raw_records"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    shards.sort();
    if !shards.is_empty() {
        return shards;
    }
    let single = dir.join("profile_export_raw.jsonl");
    if single.is_file() {
        vec![single]
    } else {
        Vec::new()
    }
}

fn turns(a: &TurnMessagesArgs, dir: &Path) -> Result<Vec<String>, String> {
    let files = raw_files(dir);
    if files.is_empty() {
        return Err(format!(
            "no raw records under {}; run the benchmark with --export-level raw first",
            dir.display()
        ));
    }
    let mut recs = Vec::new();
    for f in &files {
        recs.extend(turn_messages::parse_raw(
            &read(f)?,
            &f.display().to_string(),
        )?);
    }
    if recs.is_empty() {
        return Err(format!("no valid raw records in {}", dir.display()));
    }
    let limits = turn_messages::Limits {
        conversations: a.limit_conversations,
        turns: a.max_turns,
        chars: a.content_cap,
    };
    let page = turn_messages::build(recs, files.len(), limits);
    let html = turn_messages::html(&page, &dir_name(dir));
    let out = a.out.clone().unwrap_or_else(|| {
        let base = if dir.is_file() {
            dir.parent().unwrap_or(Path::new("."))
        } else {
            dir
        };
        base.join("turn_messages.html")
    });
    write(&out, html.as_bytes())?;
    Ok(vec![format!(
        "saved {} ({} KB)",
        out.display(),
        turn_messages::thousands(html.len() / 1024)
    )])
}
