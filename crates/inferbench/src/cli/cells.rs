//! Sweep cells: the comma lists of the magic-list flags expanded (`--sweep-type grid|zip`)
//! into the values of each cell of a sweep (or of the only cell of a plain run).

use super::ProfileArgs;

/// The values of one cell of a sweep (or of the only cell of a plain run).
#[derive(Clone, Debug, PartialEq)]
pub struct CellValues {
    pub concurrency: Option<usize>,
    pub request_rate: Option<f64>,
    pub isl: u64,
    pub osl: Option<u64>,
}

/// One cell: its parameters as (name, value) in flag order (empty for a plain run), its
/// directory name (`concurrency_4`, `concurrency_4_isl_128`, …) and its values.
#[derive(Clone, Debug)]
pub struct Cell {
    pub parameters: Vec<(String, serde_json::Value)>,
    pub dir_name: Option<String>,
    pub values: CellValues,
}

/// The cells of `--concurrency`, `--request-rate`, `--isl` and `--osl` lists: with
/// `--sweep-type grid` (AIPerf's default) every combination, the first flag outermost; with
/// `zip` the i-th values together. A flag with one value (or none) is not a sweep parameter.
pub fn cells(a: &ProfileArgs) -> Result<Vec<Cell>, String> {
    let opt = |v: &[usize]| -> Vec<Option<usize>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().map(|x| Some(*x)).collect()
        }
    };
    let conc = opt(&a.concurrency);
    let rates: Vec<Option<f64>> = if a.request_rate.is_empty() {
        vec![None]
    } else {
        a.request_rate.iter().map(|x| Some(*x)).collect()
    };
    let isl = if a.isl.is_empty() {
        vec![550]
    } else {
        a.isl.clone()
    };
    let osl: Vec<Option<u64>> = if a.osl.is_empty() {
        vec![None]
    } else {
        a.osl.iter().map(|x| Some(*x)).collect()
    };
    let lens = [conc.len(), rates.len(), isl.len(), osl.len()];
    // (index into each list) per cell: the grid's every combination, first flag outermost,
    // or zip's i-th of each swept list (a one-value list is held).
    let combos: Vec<[usize; 4]> = match a.aiperf.sweep_type {
        super::SweepTypeArg::Grid => {
            let mut v = Vec::new();
            for c in 0..lens[0] {
                for r in 0..lens[1] {
                    for i in 0..lens[2] {
                        for o in 0..lens[3] {
                            v.push([c, r, i, o]);
                        }
                    }
                }
            }
            v
        }
        super::SweepTypeArg::Zip => {
            let swept: Vec<usize> = lens.iter().copied().filter(|n| *n > 1).collect();
            let n = swept.first().copied().unwrap_or(1);
            if swept.iter().any(|m| *m != n) {
                return Err(format!(
                    "--sweep-type zip: the swept lists have different lengths ({}); zip pairs their i-th values",
                    [
                        ("--concurrency", lens[0]),
                        ("--request-rate", lens[1]),
                        ("--isl", lens[2]),
                        ("--osl", lens[3])
                    ]
                    .iter()
                    .filter(|(_, l)| *l > 1)
                    .map(|(f, l)| format!("{f} {l}"))
                    .collect::<Vec<_>>()
                    .join(", ")
                ));
            }
            let at = |k: usize, j: usize| if lens[k] > 1 { j } else { 0 };
            (0..n)
                .map(|j| [at(0, j), at(1, j), at(2, j), at(3, j)])
                .collect()
        }
    };
    let mut out = Vec::new();
    for [ci, ri, ii, oi] in combos {
        let (c, r, i, o) = (&conc[ci], &rates[ri], &isl[ii], &osl[oi]);
        let mut parameters: Vec<(String, serde_json::Value)> = Vec::new();
        if conc.len() > 1 {
            parameters.push(("concurrency".into(), serde_json::json!(c)));
        }
        if rates.len() > 1 {
            parameters.push(("request_rate".into(), serde_json::json!(r)));
        }
        if isl.len() > 1 {
            parameters.push(("isl".into(), serde_json::json!(i)));
        }
        if osl.len() > 1 {
            parameters.push(("osl".into(), serde_json::json!(o)));
        }
        let dir_name = (!parameters.is_empty()).then(|| {
            parameters
                .iter()
                .map(|(k, v)| format!("{k}_{v}"))
                .collect::<Vec<_>>()
                .join("_")
        });
        out.push(Cell {
            parameters,
            dir_name,
            values: CellValues {
                concurrency: *c,
                request_rate: *r,
                isl: *i,
                osl: *o,
            },
        });
    }
    if out.len() > 1000 {
        return Err(format!("the sweep has {} cells: at most 1000", out.len()));
    }
    Ok(out)
}
