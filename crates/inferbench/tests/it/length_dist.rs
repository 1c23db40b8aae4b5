//! `--isl-dist` / `--osl-dist`: lengths drawn from AIPerf's config distributions
//! (log-normal, mixtures, empirical points, clamps), end to end.

use crate::common::{run, stderr, tmpdir};

fn metric(dir: &std::path::Path, tag: &str) -> Vec<f64> {
    std::fs::read_to_string(dir.join("profile_export.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|l| l["metrics"][tag]["value"].as_f64())
        .collect()
}

#[test]
fn drawn_lengths_take_only_the_points_and_the_clamped_values_asked_for() {
    let dir = tmpdir("length-dist");
    let d = dir.display().to_string();
    let o = run(&[
        "profile",
        "--request-count",
        "24",
        "--concurrency",
        "4",
        "--isl-dist",
        r#"{"points":[{"value":20,"weight":1},{"value":40,"weight":1}]}"#,
        // A log-normal with a median of 6 clamped to [4, 8].
        "--osl-dist",
        r#"{"mean":9,"median":6,"min":4,"max":8}"#,
        "--sim-itl-ms",
        "0",
        "--ui",
        "none",
        "--random-seed",
        "3",
        "--artifact-dir",
        &d,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let isl = metric(&dir, "input_sequence_length");
    assert_eq!(isl.len(), 24);
    assert!(isl.iter().all(|&x| x == 20.0 || x == 40.0), "{isl:?}");
    assert!(isl.contains(&20.0) && isl.contains(&40.0), "{isl:?}");
    let osl = metric(&dir, "output_sequence_length");
    assert_eq!(osl.len(), 24);
    assert!(osl.iter().all(|&x| (4.0..=8.0).contains(&x)), "{osl:?}");
    // The manifest keeps the distributions as given.
    let m = crate::common::read_json(&dir.join("inferbench_manifest.json"));
    assert!(m.to_string().contains("median"), "{m}");
}

#[test]
fn a_bad_distribution_or_a_conflicting_flag_is_one_line_naming_it() {
    for (args, want) in [
        (
            &["--isl-dist", r#"{"mean":10,"median":20}"#][..],
            "--isl-dist.median: 20 is above the mean 10",
        ),
        (&["--osl-dist", "{mean"][..], "--osl-dist: not JSON"),
        (&["--isl-dist", "64", "--isl", "32"][..], "--isl-dist"),
        (
            &["--osl-dist", "64", "--seq-dist", "10,10:100"][..],
            "--osl-dist",
        ),
    ] {
        let mut a = vec!["profile", "--request-count", "1"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
