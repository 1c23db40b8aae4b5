//! Sweep cells: the comma lists of the magic-list flags expanded (`--sweep-type grid|zip`)
//! into the values of each cell of a sweep (or of the only cell of a plain run).

use serde_json::{Value, json};

use super::ProfileArgs;

/// The values of one cell of a sweep (or of the only cell of a plain run).
#[derive(Clone, Debug, PartialEq)]
pub struct CellValues {
    pub concurrency: Option<usize>,
    pub request_rate: Option<f64>,
    pub isl: u64,
    pub osl: Option<u64>,
    pub isl_stddev: f64,
    pub osl_stddev: f64,
    pub conversation_turn_mean: f64,
    pub benchmark_duration: Option<f64>,
    pub request_count: Option<u64>,
    pub prefill_concurrency: Option<usize>,
    pub num_users: Option<usize>,
}

/// One cell: its parameters as (name, value) in flag order (empty for a plain run), its
/// directory name (`concurrency_4`, `concurrency_4_isl_128`, …) and its values.
#[derive(Clone, Debug)]
pub struct Cell {
    pub parameters: Vec<(String, Value)>,
    pub dir_name: Option<String>,
    pub values: CellValues,
}

/// A magic-list flag: its flag, its parameter name (also its directory-name part) and its
/// values, each as JSON (`null` = not given).
struct Dim {
    flag: &'static str,
    name: &'static str,
    values: Vec<Value>,
}

fn dim<T: serde::Serialize>(flag: &'static str, name: &'static str, v: &[T]) -> Dim {
    Dim {
        flag,
        name,
        values: if v.is_empty() {
            vec![Value::Null]
        } else {
            v.iter().map(|x| json!(x)).collect()
        },
    }
}

/// The magic-list flags, in the order their parameters name a cell.
fn dims(a: &ProfileArgs) -> Vec<Dim> {
    vec![
        dim("--concurrency", "concurrency", &a.concurrency),
        dim("--request-rate", "request_rate", &a.request_rate),
        dim("--isl", "isl", &a.isl),
        dim("--osl", "osl", &a.osl),
        dim("--isl-stddev", "isl_stddev", &a.isl_stddev),
        dim("--osl-stddev", "osl_stddev", &a.osl_stddev),
        dim(
            "--conversation-turn-mean",
            "conversation_turn_mean",
            &a.conversation_turn_mean,
        ),
        dim(
            "--benchmark-duration",
            "benchmark_duration",
            &a.benchmark_duration,
        ),
        dim("--request-count", "request_count", &a.request_count),
        dim(
            "--prefill-concurrency",
            "prefill_concurrency",
            &a.prefill_concurrency,
        ),
        dim("--num-users", "num_users", &a.num_users),
    ]
}

/// The magic-list flags given with more than one value (those that make a sweep).
pub fn swept_flags(a: &ProfileArgs) -> Vec<&'static str> {
    dims(a)
        .into_iter()
        .filter(|d| d.values.len() > 1)
        .map(|d| d.flag)
        .collect()
}

/// The index into each list, per cell: with `grid` (AIPerf's default) every combination,
/// the first flag outermost; with `zip` the i-th values of the swept lists together (a
/// one-value list is held).
fn combos(dims: &[Dim], zip: bool) -> Result<Vec<Vec<usize>>, String> {
    let lens: Vec<usize> = dims.iter().map(|d| d.values.len()).collect();
    if !zip {
        use crate::aiperf_config::sweep::{MAX_CELLS, grid};
        return grid(&lens, MAX_CELLS).ok_or_else(|| {
            format!("the sweep has more than {MAX_CELLS} cells: at most {MAX_CELLS}")
        });
    }
    let n = lens.iter().copied().find(|n| *n > 1).unwrap_or(1);
    if lens.iter().any(|m| *m > 1 && *m != n) {
        return Err(format!(
            "--sweep-type zip: the swept lists have different lengths ({}); zip pairs their i-th values",
            dims.iter()
                .filter(|d| d.values.len() > 1)
                .map(|d| format!("{} {}", d.flag, d.values.len()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok((0..n)
        .map(|j| lens.iter().map(|&l| if l > 1 { j } else { 0 }).collect())
        .collect())
}

/// The cells of the magic-list flags' comma lists (`--concurrency`, `--request-rate`,
/// `--isl`, `--osl`, `--isl-stddev`, `--osl-stddev`, `--conversation-turn-mean`,
/// `--benchmark-duration`, `--request-count`, `--prefill-concurrency`, `--num-users`). A flag
/// with one value (or none) is not a sweep parameter.
pub fn cells(a: &ProfileArgs) -> Result<Vec<Cell>, String> {
    let dims = dims(a);
    // JSON has no NaN or infinity: such a value would read back as "not given".
    for d in &dims {
        if d.values.first() != Some(&Value::Null) && d.values.contains(&Value::Null) {
            return Err(format!("{}: every value must be a finite number", d.flag));
        }
    }
    let combos = combos(
        &dims,
        matches!(a.aiperf.sweep_type, super::SweepTypeArg::Zip),
    )?;
    let max = crate::aiperf_config::sweep::MAX_CELLS;
    if combos.len() > max {
        return Err(format!(
            "the sweep has {} cells: at most {max}",
            combos.len()
        ));
    }
    let mut out = Vec::with_capacity(combos.len());
    for combo in combos {
        let at = |k: usize| &dims[k].values[combo[k]];
        let parameters: Vec<(String, Value)> = dims
            .iter()
            .zip(&combo)
            .filter(|(d, _)| d.values.len() > 1)
            .map(|(d, &i)| (d.name.to_string(), d.values[i].clone()))
            .collect();
        let dir_name = (!parameters.is_empty()).then(|| {
            parameters
                .iter()
                .map(|(k, v)| format!("{k}_{v}"))
                .collect::<Vec<_>>()
                .join("_")
        });
        // The values came from typed lists, so each reads back as its type (or null).
        let u = |k: usize| at(k).as_u64();
        let f = |k: usize| at(k).as_f64();
        out.push(Cell {
            parameters,
            dir_name,
            values: CellValues {
                concurrency: u(0).map(|x| x as usize),
                request_rate: f(1),
                isl: u(2).unwrap_or(550),
                osl: u(3),
                isl_stddev: f(4).unwrap_or(0.0),
                osl_stddev: f(5).unwrap_or(0.0),
                conversation_turn_mean: f(6).unwrap_or(1.0),
                benchmark_duration: f(7),
                request_count: u(8),
                prefill_concurrency: u(9).map(|x| x as usize),
                num_users: u(10).map(|x| x as usize),
            },
        });
    }
    Ok(out)
}
