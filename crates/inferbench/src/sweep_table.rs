//! The sweep table: during a sweep of several cells, after each cell's last trial, the table
//! of every finished cell so far is printed again (AIPerf 0.13's streaming sweep table): the
//! swept parameters, four headline numbers and the trials. `--no-sweep-table` (YAML
//! `noSweepTable: true`) turns it off; it is off anyway when stdout is not a terminal or the
//! sweep has one cell.

use inferbench_core::summary::{MetricValue, Summary};
use serde_json::Value;

/// AIPerf's headline columns: (metric tag, statistic).
pub const HEADLINE: [(&str, &str); 4] = [
    ("output_token_throughput", "avg"),
    ("time_to_first_token", "p99"),
    ("inter_token_latency", "p99"),
    ("request_latency", "p95"),
];

/// Whether the table is printed: not suppressed, stdout a terminal, more than one cell.
/// (AIPerf also leaves it out under its dashboard UI, which it refuses for sweeps anyway;
/// inferbench's dashboard is a progress bar gone between runs, so the table shows with it.)
pub fn wanted(no_sweep_table: bool, stdout_is_terminal: bool, cells: usize) -> bool {
    !no_sweep_table && stdout_is_terminal && cells > 1
}

pub struct SweepTable {
    /// The parameter columns: every cell's parameter names, sorted (AIPerf's order).
    params: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl SweepTable {
    /// The table of a sweep whose cells have these parameters.
    pub fn new<'a>(cells: impl IntoIterator<Item = &'a [(String, Value)]>) -> SweepTable {
        let mut params: Vec<String> = cells
            .into_iter()
            .flat_map(|p| p.iter().map(|(k, _)| k.clone()))
            .collect();
        params.sort();
        params.dedup();
        SweepTable {
            params,
            rows: Vec::new(),
        }
    }

    /// Adds a finished cell and renders the whole table.
    pub fn add(
        &mut self,
        parameters: &[(String, Value)],
        trials: usize,
        runs: &[Summary],
    ) -> String {
        let mut row: Vec<String> = self
            .params
            .iter()
            .map(|name| {
                parameters
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .unwrap_or_default()
            })
            .collect();
        for (tag, stat) in HEADLINE {
            row.push(
                cell_value(runs, tag, stat)
                    .map(|v| format!("{v:.2}"))
                    .unwrap_or_default(),
            );
        }
        row.push(trials.to_string());
        self.rows.push(row);
        self.render()
    }

    /// A header, a heavy rule and the rows, every column right-aligned to its widest entry,
    /// one space of padding each side (the shape of AIPerf's rich table).
    fn render(&self) -> String {
        let header: Vec<String> = self
            .params
            .iter()
            .cloned()
            .chain(HEADLINE.iter().map(|(t, _)| t.to_string()))
            .chain(["trials".to_string()])
            .collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| -> String {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!(" {c:>w$} "))
                .collect();
            format!(" {} ", parts.join(" ")).trim_end().to_string()
        };
        let inner: usize = widths.iter().map(|w| w + 2).sum::<usize>() + widths.len() - 1;
        let mut out = vec![line(&header), format!(" {}", "━".repeat(inner))];
        out.extend(self.rows.iter().map(|r| line(r)));
        out.join("\n")
    }
}

/// One headline number of a cell: the statistic of its one good run, or the mean over its
/// good runs that have it. (AIPerf 0.13 looks the cell up under names its multi-trial
/// aggregate does not use, so with several trials its columns stay empty; the mean is what
/// they stand for.) None when no good run has it.
pub fn cell_value(runs: &[Summary], tag: &str, stat: &str) -> Option<f64> {
    let values: Vec<f64> = runs.iter().filter_map(|s| stat_of(s, tag, stat)).collect();
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// A scalar metric's value is its `avg` (AIPerf exports a scalar so); a distribution's
/// statistic is its own.
fn stat_of(s: &Summary, tag: &str, stat: &str) -> Option<f64> {
    let m = s.get(tag)?;
    match &m.value {
        MetricValue::Scalar { .. } => (stat == "avg").then(|| m.scalar()).flatten(),
        MetricValue::Distribution { .. } => m.stats().and_then(|st| st.get(stat)),
    }
    .filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests;
