//! `inferbench report DIR... --html OUT.html`: two small runs against the simulated server
//! (one with a planted `--api-key`, one with a planted `--header Authorization:…`), a gate
//! verdict saved in one, then the report: every section is there with values read from the
//! runs' own files, file-derived text is escaped, nothing is fetched, no secret leaks.

use std::path::Path;

use crate::common;

use common::{read_json, run, stderr, tmpdir};

const KEY: &str = "PLANTED-KEY-7f3a";
const HDR: &str = "PLANTED-HDR-91c2";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn profile(dir: &Path, secret: &[&str]) {
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "12",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "5",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "1",
        "--server-metrics-interval",
        "0.02",
        "--artifact-dir",
        s(dir),
    ];
    args.extend_from_slice(secret);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The HTML-escaped form, as the page must write a file-derived string.
fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn the_report_holds_every_section_with_the_runs_own_numbers() {
    let root = tmpdir("report-html");
    // A directory name with markup in it: it appears in headings and chart legends.
    let a = root.join("base<b>&'x");
    let b = root.join("cand");
    let key_flag = format!("--api-key={KEY}");
    let hdr_flag = format!("--header=Authorization:Bearer {HDR}");
    profile(&a, &[&key_flag]);
    profile(&b, &[&hdr_flag]);
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gate.toml");
    let o = run(&[
        "gate",
        "--spec",
        s(&spec),
        s(&a),
        "--json",
        s(&a.join("verdict.json")),
    ]);
    assert!(o.status.code().is_some_and(|c| c != 2), "{}", stderr(&o));
    let verdict = read_json(&a.join("verdict.json"));
    let graded = root.join("grade.json");
    let o = run(&["grade", s(&a), "--json", s(&graded)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cw = root.join("cw");
    let o = run(&["crosswalk", s(&a), "--output-dir", s(&cw)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let out = root.join("report.html");
    let o = run(&[
        "report",
        s(&a),
        s(&b),
        "--html",
        s(&out),
        "--gate",
        s(&spec),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));

    // Sections, per run and for the pair.
    for h in [
        "<h4>Identity</h4>",
        "<h4>Console tables</h4>",
        "<h4>Charts</h4>",
        "<h4>Server metrics</h4>",
        "<h4>Crosswalk</h4>",
        "<h4>Grade</h4>",
    ] {
        assert_eq!(html.matches(h).count(), 2, "{h}");
    }
    assert!(html.contains("<h2>All runs overlaid</h2>"));
    assert!(html.contains("<h2>Comparison</h2>"));
    assert_eq!(
        html.matches("<h3>Gate ").count(),
        2,
        "--gate on each directory"
    );

    // Identity from the manifest.
    let m = read_json(&a.join("inferbench_manifest.json"));
    for k in [
        "/benchmark_id",
        "/dataset/workload_sha256",
        "/tokenizer/name",
    ] {
        let v = m.pointer(k).and_then(|v| v.as_str()).unwrap();
        assert!(html.contains(&format!("<td>{}</td>", esc(v))), "{k} {v}");
    }
    // The console table: TTFT's avg and p99 as the summary file holds them (2 decimals).
    let sum = read_json(&a.join("profile_export_aiperf.json"));
    let ttft = &sum["time_to_first_token"];
    let line = html
        .lines()
        .find(|l| l.contains("Time to First Token (ms)"))
        .expect("the TTFT row");
    for st in ["avg", "p99", "max"] {
        let v = format!("{:.2}", ttft[st].as_f64().unwrap());
        assert!(line.contains(&v), "{st} {v} in {line}");
    }
    let count = sum["request_count"]["avg"].as_f64().unwrap();
    assert_eq!(count, 12.0);
    // The grade as `grade --json` computes it.
    let g = read_json(&graded);
    assert!(html.contains(&format!(
        "grade under {} (overall: {})",
        g["definition_set"].as_str().unwrap(),
        g["overall"].as_str().unwrap()
    )));
    // The crosswalk: one row per mapping `crosswalk` writes, with the comparable column.
    let c = read_json(&cw.join("crosswalk.json"));
    let rows = c["mappings"].as_array().unwrap().len();
    assert!(rows > 0);
    let marked = html.matches("<span class=\"yes\">yes</span>").count()
        + html.matches("<span class=\"NO\">NO</span>").count();
    assert_eq!(marked, 2 * rows, "both runs have the same mappings");
    // The saved verdict.
    let overall = verdict["verdict"].as_str().unwrap();
    assert!(html.contains("<h4>Gate verdict verdict.json</h4>"));
    assert!(html.contains(&format!(
        "Gate demo-chat-128-32 under aiperf-0.13: <span class=\"{overall}\">{overall}</span>"
    )));
    // Charts: 7 request charts per run, 7 overlaid and the Pareto chart, and server-metric
    // series (the simulated server's running-requests gauge moves during the run).
    assert!(html.matches("<svg ").count() > 2 * 7 + 7 + 1);
    assert!(html.contains(">vllm:num_requests_running</text>"));

    // Escaping: the directory name never appears raw.
    assert!(!html.contains("base<b>"));
    assert!(html.contains(&esc("base<b>&'x")));
    // Nothing is fetched: no external resource of any kind; the only URLs are the SVG
    // namespace and the simulated server's address (text in the identity table).
    for bad in ["src=", "<link", "@import", "url("] {
        assert!(!html.contains(bad), "{bad}");
    }
    for scheme in ["http://", "https://"] {
        for (i, _) in html.match_indices(scheme) {
            let rest = &html[i..];
            assert!(
                rest.starts_with("http://www.w3.org/2000/svg")
                    || rest.starts_with("http://127.0.0.1:"),
                "{}",
                &rest[..rest.len().min(60)]
            );
        }
    }
    // The planted secrets are nowhere.
    assert!(!html.contains(KEY) && !html.contains(HDR));
}

#[test]
fn a_directory_that_is_not_a_run_is_bad_input_naming_it() {
    let root = tmpdir("report-html-bad");
    let missing = root.join("nothing-here");
    let out = root.join("r.html");
    let o = run(&["report", s(&missing), "--html", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(s(&missing)), "{}", stderr(&o));
    assert!(!out.exists());
}
