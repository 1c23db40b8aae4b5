//! The Prometheus text parser never panics, in either format, and what it accepts keeps its
//! promises: labels sorted by name and unique, each (sample name, labels) once.
#![no_main]

use inferbench_telemetry::expo;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    // The first byte chooses the content type; the rest is the body.
    let Some((&mode, body)) = input.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let content_type = match mode % 3 {
        0 => None,
        1 => Some("text/plain; version=0.0.4; charset=utf-8"),
        _ => Some("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    };
    let Ok(exposition) = expo::parse(text, content_type) else {
        return;
    };
    let mut seen = std::collections::HashSet::new();
    for family in &exposition.families {
        for s in &family.samples {
            assert!(!s.name.is_empty());
            assert!(s.labels.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(seen.insert((s.name.clone(), s.labels.clone())));
        }
    }
});
