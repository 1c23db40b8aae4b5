//! Units a spec may write, and their conversion into a metric's display unit. A limit in a
//! unit of another dimension is refused (a TTFT bound in tokens/s never passes silently).

/// A dimension and the factor that takes a value in this unit to the dimension's base unit
/// (ms for time, per second for rates, 1 for counts, fraction 0–1 for ratios).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitInfo {
    pub dimension: &'static str,
    pub factor: f64,
}

/// Every unit name accepted, lower-case.
const UNITS: &[(&str, &str, f64)] = &[
    ("ns", "time", 1e-6),
    ("us", "time", 1e-3),
    ("µs", "time", 1e-3),
    ("ms", "time", 1.0),
    ("s", "time", 1000.0),
    ("sec", "time", 1000.0),
    ("tokens/s", "tokens/sec", 1.0),
    ("tokens/sec", "tokens/sec", 1.0),
    ("tok/s", "tokens/sec", 1.0),
    ("tokens/s/user", "tokens/sec/user", 1.0),
    ("tokens/sec/user", "tokens/sec/user", 1.0),
    ("requests/s", "requests/sec", 1.0),
    ("requests/sec", "requests/sec", 1.0),
    ("req/s", "requests/sec", 1.0),
    ("tokens", "tokens", 1.0),
    ("requests", "requests", 1.0),
    ("%", "fraction", 0.01),
    ("fraction", "fraction", 1.0),
    ("pp", "fraction", 0.01),
];

/// What `unit` is; `None` for a unit nobody knows.
pub fn info(unit: &str) -> Option<UnitInfo> {
    let u = unit.trim().to_lowercase();
    UNITS
        .iter()
        .find(|(n, _, _)| *n == u)
        .map(|&(_, dimension, factor)| UnitInfo { dimension, factor })
}

/// The names, for messages.
pub fn names() -> String {
    UNITS
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `value` written in `given`, in `metric_unit` (a display unit of the registry: `ms`,
/// `sec`, `tokens/sec`, `%`…). Errors name both units.
pub fn convert(value: f64, given: &str, metric_unit: &str) -> Result<f64, String> {
    let g = info(given).ok_or_else(|| format!("unknown unit \"{given}\" (known: {})", names()))?;
    let m = info(metric_unit)
        .ok_or_else(|| format!("the metric's unit \"{metric_unit}\" takes no bound with a unit"))?;
    if g.dimension != m.dimension {
        return Err(format!(
            "unit \"{given}\" ({}) does not match the metric's unit \"{metric_unit}\" ({})",
            g.dimension, m.dimension
        ));
    }
    Ok(value * g.factor / m.factor)
}

/// `"2000 ms"`, `"2 s"`, `"90%"`, `"1.5pp"` → (number, unit). A bare number has no unit:
/// an error, since a bound without a unit is what the gate exists to refuse.
pub fn quantity(text: &str) -> Result<(f64, String), String> {
    let t = text.trim();
    let split = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == '-' || c == '+') && i == 0)
                || c == 'e' && i > 0)
        })
        .map_or(t.len(), |(i, _)| i);
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().map_err(|_| {
        format!("\"{text}\": a number followed by a unit is needed, e.g. \"2000 ms\"")
    })?;
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!("\"{text}\": no unit (write e.g. \"{value} ms\")"));
    }
    if !value.is_finite() {
        return Err(format!("\"{text}\": not a finite number"));
    }
    Ok((value, unit.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_to_ms_and_other_dimensions_are_refused() {
        assert_eq!(convert(2.0, "s", "ms").unwrap(), 2000.0);
        assert_eq!(convert(1500.0, "us", "ms").unwrap(), 1.5);
        assert_eq!(convert(90.0, "%", "fraction").unwrap(), 0.9);
        let e = convert(10.0, "tokens/s", "ms").unwrap_err();
        assert!(e.contains("does not match"), "{e}");
        assert!(
            convert(1.0, "furlongs", "ms")
                .unwrap_err()
                .contains("unknown unit")
        );
    }

    #[test]
    fn quantities_need_a_unit() {
        assert_eq!(quantity("2000 ms").unwrap(), (2000.0, "ms".into()));
        assert_eq!(quantity("1.5pp").unwrap(), (1.5, "pp".into()));
        assert_eq!(quantity("-2%").unwrap(), (-2.0, "%".into()));
        assert!(quantity("2000").unwrap_err().contains("no unit"));
        assert!(quantity("fast").is_err());
    }
}
