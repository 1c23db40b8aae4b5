//! A [`Report`] as a console table, Markdown or JSON (strings: the binary writes them).

use super::report::{DiffReport, MetricReport, Report, Scale};

impl Report {
    /// The console table, with the epoch, the notes and the outcome.
    pub fn console(&self) -> String {
        let mut rows = vec![[
            "Metric".to_string(),
            "Baseline".into(),
            "Candidate".into(),
            "Change".into(),
            format!("{:.0}% interval", self.confidence * 100.0),
            "Margin".into(),
            "Method".into(),
            "Verdict".into(),
            "Would decide".into(),
        ]];
        for m in &self.metrics {
            rows.push(row(m));
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = format!("{}\n", self.headline());
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        for l in self.footer() {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }

    /// A Markdown report: the same table, then the epoch, the notes and the outcome.
    pub fn markdown(&self) -> String {
        let mut out = format!("# Comparison\n\n{}\n\n", self.headline());
        out.push_str(&format!(
            "| Metric | Baseline | Candidate | Change | {:.0}% interval | Margin | Method | Verdict | Would decide |\n",
            self.confidence * 100.0
        ));
        out.push_str("|---|---|---|---|---|---|---|---|---|\n");
        for m in &self.metrics {
            let cells: Vec<String> = row(m).iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push_str("\n## Reasons\n\n");
        for m in &self.metrics {
            out.push_str(&format!(
                "- `{}`: **{}**: {}\n",
                m.key,
                m.verdict.as_str(),
                m.reason
            ));
        }
        out.push('\n');
        for l in self.footer() {
            out.push_str(&format!("{l}\n\n"));
        }
        out
    }

    /// The JSON document (`docs/schemas/compare.schema.json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }

    fn headline(&self) -> String {
        let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
        format!(
            "Candidate ({}) against baseline ({}) under {}: {:.0}% intervals of candidate − baseline (one-sided α = {}), Holm across {} metric{}; margins {}",
            runs(self.candidate.len()),
            runs(self.baseline.len()),
            self.definition_set,
            self.confidence * 100.0,
            self.alpha,
            self.multiplicity.family_size,
            if self.multiplicity.family_size == 1 {
                ""
            } else {
                "s"
            },
            if self.margins == "default" {
                "are defaults (not measured values)"
            } else {
                "declared"
            }
        )
    }

    fn footer(&self) -> Vec<String> {
        let mut out = vec![format!("Epoch: {}", self.epoch.note)];
        for c in &self.epoch.changed {
            out.push(format!(
                "  pin {}: {} -> {}",
                c.name,
                c.before
                    .as_ref()
                    .map_or("unknown".into(), |v| v.to_string()),
                c.after.as_ref().map_or("unknown".into(), |v| v.to_string())
            ));
        }
        for n in &self.notes {
            out.push(format!("Note: {n}"));
        }
        let inconclusive = self
            .metrics
            .iter()
            .filter(|m| m.verdict == super::Verdict::Inconclusive)
            .count();
        out.push(if self.worse.is_empty() {
            format!(
                "Result: nothing worse ({inconclusive} inconclusive); exit {}",
                self.exit_code
            )
        } else {
            format!(
                "Result: worse: {} ({inconclusive} inconclusive); exit {}",
                self.worse.join(", "),
                self.exit_code
            )
        });
        out
    }
}

fn row(m: &MetricReport) -> [String; 9] {
    let value = |v: Option<f64>| match (v, m.scale) {
        (None, _) => "-".to_string(),
        (Some(x), Scale::Fraction) => format!("{:.2}%", x * 100.0),
        (Some(x), _) => format!("{} {}", sig(x), m.unit),
    };
    let (change, interval) = match &m.difference {
        Some(d) => (delta(m.scale, d.estimate, &m.unit), interval(m, d)),
        None => ("-".into(), "-".into()),
    };
    let needed = m.needed.as_ref().map_or(String::new(), |n| {
        let unit = match n.unit {
            "runs_per_side" => "runs/side",
            "requests_per_side" => "requests/side",
            _ => "requests/arm",
        };
        format!("{} {unit}", n.value)
    });
    [
        m.key.clone(),
        value(m.baseline.value),
        value(m.candidate.value),
        change,
        interval,
        m.margin.text.clone(),
        format!("{:?}", m.method)
            .to_lowercase()
            .replace("welchtost", "welch-tost"),
        m.verdict.as_str().to_string(),
        needed,
    ]
}

fn interval(m: &MetricReport, d: &DiffReport) -> String {
    format!(
        "[{}, {}]",
        delta(m.scale, d.low, &m.unit),
        delta(m.scale, d.high, &m.unit)
    )
}

/// A difference on its scale: a log ratio as a % change, a fraction in pp.
fn delta(scale: Scale, x: f64, unit: &str) -> String {
    match scale {
        Scale::Log => format!("{:+.2}%", (x.exp() - 1.0) * 100.0),
        Scale::Fraction => format!("{:+.2}pp", x * 100.0),
        Scale::Linear => format!("{:+} {unit}", sig(x)),
    }
}

/// Four significant digits, without exponent for everyday magnitudes.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}
