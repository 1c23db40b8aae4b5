//! `--request-rate-series`: a piecewise-linear request rate read from a JSON file (AIPerf's
//! `rate_series`). This module parses and validates the points and interpolates between
//! them; [`crate::schedule::RateSchedule::with_series`] turns them into send times.

use serde::{Deserialize, Serialize};

/// One control point: from the start of the series (after any rate ramp), `time_s`
/// seconds in, the rate is `qps` requests per second.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RatePoint {
    /// AIPerf also reads its camelCase alias.
    #[serde(alias = "timeS")]
    pub time_s: f64,
    pub qps: f64,
}

/// At least two points, `time_s` finite, ≥ 0 and strictly increasing, `qps` finite and > 0
/// (AIPerf's rules). Before the first point the rate is the first `qps`; after the last,
/// the last `qps`; between two points it is interpolated linearly.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(try_from = "Vec<RatePoint>", into = "Vec<RatePoint>")]
pub struct RateSeries {
    points: Vec<RatePoint>,
}

impl TryFrom<Vec<RatePoint>> for RateSeries {
    type Error = String;

    fn try_from(points: Vec<RatePoint>) -> Result<Self, String> {
        Self::new(points)
    }
}

impl From<RateSeries> for Vec<RatePoint> {
    fn from(s: RateSeries) -> Self {
        s.points
    }
}

impl RateSeries {
    /// Validates the points; the error names the point (0-based) and its field.
    pub fn new(points: Vec<RatePoint>) -> Result<Self, String> {
        if points.len() < 2 {
            return Err(format!("needs at least two points, got {}", points.len()));
        }
        for (i, p) in points.iter().enumerate() {
            if !(p.time_s.is_finite() && p.time_s >= 0.0) {
                return Err(format!(
                    "point {i}: time_s must be a finite number ≥ 0, got {}",
                    p.time_s
                ));
            }
            if !(p.qps.is_finite() && p.qps > 0.0) {
                return Err(format!(
                    "point {i}: qps must be a finite number > 0, got {}",
                    p.qps
                ));
            }
            if i > 0 && p.time_s <= points[i - 1].time_s {
                return Err(format!(
                    "point {i}: time_s {} is not after point {}'s {} (time_s must strictly increase)",
                    p.time_s,
                    i - 1,
                    points[i - 1].time_s
                ));
            }
        }
        Ok(Self { points })
    }

    /// Parses AIPerf's file: either an array of points or an object whose only key is
    /// `points`. Each point is `{"time_s": …, "qps": …}` and nothing else.
    pub fn parse_json(text: &str) -> Result<Self, String> {
        let doc: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("line {} column {}: invalid JSON: {e}", e.line(), e.column()))?;
        let list = match doc {
            serde_json::Value::Array(a) => a,
            serde_json::Value::Object(mut o) => {
                if o.len() != 1 || !o.contains_key("points") {
                    return Err("an object must have exactly one key, points".into());
                }
                match o.remove("points") {
                    Some(serde_json::Value::Array(a)) => a,
                    _ => return Err("points must be an array".into()),
                }
            }
            _ => return Err("must be an array of points or an object with points".into()),
        };
        let mut points = Vec::with_capacity(list.len());
        for (i, v) in list.into_iter().enumerate() {
            let p: RatePoint = serde_json::from_value(v).map_err(|e| {
                format!("point {i}: {e} (a point is {{\"time_s\": seconds, \"qps\": rate}})")
            })?;
            points.push(p);
        }
        Self::new(points)
    }

    pub fn points(&self) -> &[RatePoint] {
        &self.points
    }

    /// The rate before and at the first point.
    pub fn initial_qps(&self) -> f64 {
        self.points[0].qps
    }

    /// The rate from the last point on.
    pub fn final_qps(&self) -> f64 {
        self.points[self.points.len() - 1].qps
    }

    /// The lowest rate anywhere in the series (a linear piece's extremes are its ends).
    pub fn min_qps(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.qps)
            .fold(f64::INFINITY, f64::min)
    }

    /// The last point's time: where the series ends and the final rate holds.
    pub fn end_s(&self) -> f64 {
        self.points[self.points.len() - 1].time_s
    }

    /// The interpolated rate `elapsed_s` seconds into the series.
    pub fn value_at(&self, elapsed_s: f64) -> f64 {
        let p = &self.points;
        if elapsed_s <= p[0].time_s {
            return p[0].qps;
        }
        if elapsed_s >= self.end_s() {
            return self.final_qps();
        }
        // The first point strictly after elapsed_s; ≥ 1 and < len by the checks above.
        let right = p.partition_point(|q| q.time_s <= elapsed_s);
        let (a, b) = (p[right - 1], p[right]);
        let progress = (elapsed_s - a.time_s) / (b.time_s - a.time_s);
        a.qps + (b.qps - a.qps) * progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pt(time_s: f64, qps: f64) -> RatePoint {
        RatePoint { time_s, qps }
    }

    #[test]
    fn both_file_shapes_parse_to_the_same_points() {
        let a = RateSeries::parse_json(r#"[{"time_s":0,"qps":2},{"time_s":10,"qps":4}]"#).unwrap();
        let b =
            RateSeries::parse_json(r#"{"points":[{"time_s":0,"qps":2},{"time_s":10,"qps":4}]}"#)
                .unwrap();
        assert_eq!(a, b);
        let c = RateSeries::parse_json(r#"[{"timeS":0,"qps":2},{"timeS":10,"qps":4}]"#).unwrap();
        assert_eq!(a, c);
        assert_eq!(a.points(), &[pt(0.0, 2.0), pt(10.0, 4.0)]);
    }

    #[test]
    fn interpolates_linearly_and_holds_the_ends() {
        // 2 → 4 over 10 s, then 4 → 1 over 2 s.
        let s = RateSeries::new(vec![pt(0.0, 2.0), pt(10.0, 4.0), pt(12.0, 1.0)]).unwrap();
        assert_eq!(s.value_at(0.0), 2.0);
        assert_eq!(s.value_at(5.0), 3.0); // halfway from 2 to 4
        assert_eq!(s.value_at(10.0), 4.0);
        assert_eq!(s.value_at(11.0), 2.5); // halfway from 4 to 1
        assert_eq!(s.value_at(99.0), 1.0);
        assert_eq!(s.min_qps(), 1.0);
        // A series that starts later holds its first rate until then.
        let late = RateSeries::new(vec![pt(3.0, 5.0), pt(4.0, 6.0)]).unwrap();
        assert_eq!(late.value_at(1.0), 5.0);
    }

    #[test]
    fn bad_files_name_the_point_and_field() {
        let e = |t: &str| RateSeries::parse_json(t).unwrap_err();
        assert!(e(r#"[{"time_s":0,"qps":2}]"#).contains("at least two points"));
        assert!(e(r#"[{"time_s":0,"qps":2},{"time_s":0,"qps":3}]"#).starts_with("point 1: time_s"));
        assert!(e(r#"[{"time_s":0,"qps":2},{"time_s":1,"qps":0}]"#).starts_with("point 1: qps"));
        assert!(
            e(r#"[{"time_s":-1,"qps":2},{"time_s":1,"qps":1}]"#).starts_with("point 0: time_s")
        );
        assert!(e(r#"[{"time_s":0,"qps":2,"x":1},{"time_s":1,"qps":1}]"#).starts_with("point 0:"));
        assert!(e(r#"[{"time_s":0},{"time_s":1,"qps":1}]"#).contains("qps"));
        assert!(e(r#"{"points":[],"other":1}"#).contains("exactly one key"));
        assert!(e(r#"{"points":3}"#).contains("array"));
        assert!(e("7").contains("array"));
        assert!(e("[\n{").starts_with("line 2"));
    }

    #[test]
    fn serde_round_trip_revalidates() {
        let s = RateSeries::new(vec![pt(0.0, 1.0), pt(1.0, 2.0)]).unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(j, r#"[{"time_s":0.0,"qps":1.0},{"time_s":1.0,"qps":2.0}]"#);
        assert_eq!(serde_json::from_str::<RateSeries>(&j).unwrap(), s);
        assert!(serde_json::from_str::<RateSeries>(r#"[{"time_s":0.0,"qps":1.0}]"#).is_err());
    }

    proptest! {
        /// Any text: an error or a valid series, never a panic; a valid one's rates lie
        /// between its lowest and highest point.
        #[test]
        fn parser_never_panics(text in ".{0,80}") {
            let _ = RateSeries::parse_json(&text);
        }

        #[test]
        fn value_stays_within_the_points(
            qs in proptest::collection::vec(0.01f64..1000.0, 2..6),
            t in -5.0f64..50.0,
        ) {
            let pts: Vec<RatePoint> =
                qs.iter().enumerate().map(|(i, &q)| pt(i as f64 * 3.0, q)).collect();
            let s = RateSeries::new(pts).unwrap();
            let hi = qs.iter().cloned().fold(0.0, f64::max);
            let v = s.value_at(t);
            prop_assert!(v >= s.min_qps() - 1e-9 && v <= hi + 1e-9);
        }
    }
}
