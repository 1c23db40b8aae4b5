//! Wall-clock formatting without a date library.

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Naive UTC ISO 8601 with microseconds, as AIPerf writes `start_time`/`end_time`:
/// `2026-11-29T18:56:55.923686` (rounded to the nearest µs).
pub fn iso_utc_micros(unix_ns: u64) -> String {
    let us = (unix_ns + 500) / 1_000;
    let secs = (us / 1_000_000) as i64;
    let frac = us % 1_000_000;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

/// ISO 8601 UTC with a `Z`, to the second, for manifests.
pub fn iso_utc_seconds(unix_ns: u64) -> String {
    let secs = (unix_ns / 1_000_000_000) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_utc_micros(0), "1970-01-01T00:00:00.000000");
        // 2000-02-29T12:34:56.789012 UTC = 951827696.789012 s
        assert_eq!(
            iso_utc_micros(951_827_696_789_012_000),
            "2000-02-29T12:34:56.789012"
        );
        assert_eq!(
            iso_utc_seconds(951_827_696_789_012_000),
            "2000-02-29T12:34:56Z"
        );
        // rounding to the nearest microsecond
        assert_eq!(iso_utc_micros(1_999_999_999), "1970-01-01T00:00:02.000000");
    }
}
