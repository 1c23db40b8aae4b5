//! Pressure stall information (PSI): `/proc/pressure/*` and a cgroup's `*.pressure` files.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One line of a PSI file. `avg*` are the % of time stalled over the last 10/60/300 s, as the
/// kernel computes them; `total_us` is the cumulative stall time in µs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// A PSI file: `some` = at least one task stalled, `full` = all non-idle tasks stalled.
/// `full` is absent from `/proc/pressure/cpu` on kernels before 5.13.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureFile {
    pub some: Option<PressureLine>,
    pub full: Option<PressureLine>,
}

/// The PSI files read at one sample; `None` when the file is missing or unreadable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// `/proc/pressure/cpu`
    pub cpu: Option<PressureFile>,
    /// `/proc/pressure/memory`
    pub memory: Option<PressureFile>,
    /// `/proc/pressure/io`
    pub io: Option<PressureFile>,
    /// `cpu.pressure` of this process's cgroup v2.
    pub cgroup_cpu: Option<PressureFile>,
}

/// Parses a PSI file (`/proc/pressure/*`, `<cgroup>/*.pressure`):
/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=...`.
///
/// Lines of an unknown kind are skipped (forward compatibility); a `some`/`full` line missing a
/// field or with an unparsable value, a repeated line, or text without any `some`/`full` line is
/// an error.
pub fn parse_pressure(text: &str) -> Result<PressureFile, String> {
    let mut file = PressureFile::default();
    for line in text.lines() {
        let mut tokens = line.split_ascii_whitespace();
        let Some(kind) = tokens.next() else {
            continue;
        };
        let slot = match kind {
            "some" => &mut file.some,
            "full" => &mut file.full,
            _ => continue,
        };
        if slot.is_some() {
            return Err(format!("pressure: repeated `{kind}` line"));
        }
        *slot = Some(parse_pressure_line(kind, tokens)?);
    }
    if file.some.is_none() && file.full.is_none() {
        return Err("pressure: no `some` or `full` line".to_string());
    }
    Ok(file)
}

fn parse_pressure_line<'a>(
    kind: &str,
    tokens: impl Iterator<Item = &'a str>,
) -> Result<PressureLine, String> {
    let (mut avg10, mut avg60, mut avg300, mut total) = (None, None, None, None);
    for token in tokens {
        let (key, value) = token
            .split_once('=')
            .ok_or_else(|| format!("pressure: `{kind}` line: `{token}` is not key=value"))?;
        let avg = || -> Result<f64, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("pressure: `{kind}` line: bad {key} `{value}`"))
        };
        match key {
            "avg10" => avg10 = Some(avg()?),
            "avg60" => avg60 = Some(avg()?),
            "avg300" => avg300 = Some(avg()?),
            "total" => {
                total = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("pressure: `{kind}` line: bad total `{value}`"))?,
                )
            }
            // Unknown keys are tolerated, as unknown line kinds are.
            _ => {}
        }
    }
    match (avg10, avg60, avg300, total) {
        (Some(avg10), Some(avg60), Some(avg300), Some(total_us)) => Ok(PressureLine {
            avg10,
            avg60,
            avg300,
            total_us,
        }),
        _ => Err(format!(
            "pressure: `{kind}` line lacks one of avg10, avg60, avg300, total"
        )),
    }
}

/// A PSI file read best effort: `None` when missing, unreadable or malformed. With PSI
/// compiled in but disabled (psi=0), the files exist and reads fail: also `None`.
pub(crate) fn read_pressure(path: &Path) -> Option<PressureFile> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| parse_pressure(&text).ok())
}
