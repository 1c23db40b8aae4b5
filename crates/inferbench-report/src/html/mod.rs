//! `inferbench report DIR... --html OUT.html`: one self-contained page (inline CSS and SVG,
//! one line of inline script that marks the page as loaded; nothing fetched). Every section
//! comes from the library call the matching command makes: the console tables as `profile`
//! prints them, the charts of `plot`, `crosswalk`, `grade`, `gate` and `compare`
//! (docs/reports.md lists the sections and where each number comes from).
//!
//! Every string read from a file goes through [`escape`].

mod run;

use std::fmt::Write;
use std::path::PathBuf;

use inferbench_run::gate::{GateSpec, parse_file};
use inferbench_run::{Failure, Layout, RunDir};

use crate::charts::{RunPoints, pareto_chart, standard_charts};
use crate::svg::render;

/// What to report on.
#[derive(Clone, Debug, Default)]
pub struct ReportSpec {
    /// Run directories: a run, repeated runs, a sweep, an import, a merged sharded run.
    pub dirs: Vec<PathBuf>,
    /// A gate specification to evaluate on each directory (`gate --spec FILE DIR`).
    pub gate: Option<PathBuf>,
    /// Tokenizer for imported runs (as `metrics --tokenizer`).
    pub tokenizer: Option<String>,
}

/// The attribute the inline script sets on `<html>` once the page has run: a headless
/// browser's dumped DOM shows it only when the page loaded without a script error.
pub const READY_MARKER: &str = "data-report-ready";

/// HTML text and attribute escape.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A table from rows of already-escaped cells.
pub(crate) fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table><thead><tr>");
    for h in head {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{c}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// Preformatted text (a console table) from a file-derived string.
pub(crate) fn pre(text: &str) -> String {
    format!("<pre>{}</pre>\n", escape(text.trim_matches('\n')))
}

/// A section's note: why something is not shown.
pub(crate) fn note(text: &str) -> String {
    format!("<p class=\"note\">{}</p>\n", escape(text))
}

const CSS: &str = "body{font-family:sans-serif;margin:0 auto;max-width:1180px;padding:0 16px 40px;color:#222;background:#fff}\
h1{font-size:1.6em;border-bottom:3px solid #0072B2;padding-bottom:6px}\
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ccc}\
h3{font-size:1.1em;margin-top:1.4em}\
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}\
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#eef3f8}\
pre{background:#f6f8fa;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:0.78em;line-height:1.25}\
.charts{display:flex;flex-wrap:wrap;gap:10px}\
.charts svg{width:560px;height:auto;border:1px solid #eee}\
.note{color:#666;font-style:italic}\
.PASS,.yes{color:#087f23;font-weight:bold}.FAIL,.NO{color:#b00020;font-weight:bold}\
.INCONCLUSIVE,.INVALID{color:#a15c00;font-weight:bold}\
nav ul{columns:2}";

/// Builds the page. Errors: a directory that is not a run (exit 2, naming it), an
/// unreadable `--gate` spec.
pub fn build(spec: &ReportSpec) -> Result<String, Failure> {
    if spec.dirs.is_empty() {
        return Err(Failure::input("report: give at least one run directory"));
    }
    let gate: Option<(PathBuf, GateSpec)> = match &spec.gate {
        Some(p) => Some((p.clone(), parse_file(p)?)),
        None => None,
    };
    let mut opened = Vec::new();
    for d in &spec.dirs {
        opened.push(RunDir::open(d)?);
    }
    let mut body = String::new();
    let mut nav = Vec::new();
    let mut all_points: Vec<(RunPoints, serde_json::Value)> = Vec::new();
    for (i, (dir, rd)) in spec.dirs.iter().zip(&opened).enumerate() {
        let id = format!("dir{}", i + 1);
        let title = dir.display().to_string();
        nav.push((id.clone(), title.clone()));
        let runs = rd.runs();
        let _ = writeln!(
            body,
            "<section id=\"{id}\"><h2>{} <small>({})</small></h2>",
            escape(&title),
            escape(&layout_name(&rd.layout, runs.len()))
        );
        if let Some((path, g)) = &gate {
            body.push_str(&run::gate_evaluated(dir, path, g, spec.tokenizer.clone()));
        }
        if runs.is_empty() {
            body.push_str(&note("no run of ours or of a known tool in this directory"));
        }
        for (k, r) in runs.iter().enumerate() {
            let section = run::section(r, &format!("{id}-run{}", k + 1), spec)?;
            body.push_str(&section.html);
            if let Some(p) = section.points {
                all_points.push(p);
            }
        }
        body.push_str("</section>\n");
    }
    if all_points.len() > 1 {
        nav.push(("overlaid".into(), "All runs overlaid".into()));
        body.push_str(&overlaid(&all_points));
    }
    if spec.dirs.len() > 1 {
        nav.push(("comparison".into(), "Comparison".into()));
        body.push_str(&run::comparison(&spec.dirs, spec.tokenizer.clone()));
    }
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>inferbench report</title>",
    );
    let _ = writeln!(
        out,
        "<style>{CSS}</style></head>\n<body>\n<h1>inferbench report</h1>"
    );
    out.push_str("<nav><ul>");
    for (id, t) in &nav {
        let _ = write!(out, "<li><a href=\"#{id}\">{}</a></li>", escape(t));
    }
    out.push_str("</ul></nav>\n");
    out.push_str(&body);
    let _ = writeln!(
        out,
        "<script>document.documentElement.setAttribute(\"{READY_MARKER}\",\"1\");</script>\n</body></html>"
    );
    Ok(out)
}

fn layout_name(l: &Layout, n: usize) -> String {
    match l {
        Layout::Run => "one run".into(),
        Layout::Repeated { .. } => format!("repeated runs: {n}"),
        Layout::Sweep { cells } => format!("sweep: {} cells, {n} runs", cells.len()),
        Layout::Imported(t) => format!("{} artifacts", t.as_str()),
    }
}

/// Every run's request charts on shared axes, and the Pareto chart (as `plot` draws them).
fn overlaid(runs: &[(RunPoints, serde_json::Value)]) -> String {
    let points: Vec<RunPoints> = runs.iter().map(|r| r.0.clone()).collect();
    let mut s =
        String::from("<section id=\"overlaid\"><h2>All runs overlaid</h2>\n<div class=\"charts\">");
    for (_, c) in standard_charts(&points) {
        s.push_str(&render(&c));
    }
    let cells: Vec<(f64, f64)> = runs
        .iter()
        .filter_map(|(_, v)| {
            Some((
                v["output_token_throughput"]["avg"].as_f64()?,
                v["output_token_throughput_per_user"]["avg"].as_f64()?,
            ))
        })
        .collect();
    if cells.len() >= 2 {
        s.push_str(&render(&pareto_chart("runs", &cells)));
    }
    s.push_str("</div></section>\n");
    s
}

#[cfg(test)]
mod tests;
