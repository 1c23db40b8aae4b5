//! `--variant` cells (AIPerf's hand-picked `scenarios` sweep from the command line) and the
//! streaming sweep table (`--no-sweep-table`), against the simulated server.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{bin, read_json, run, stderr, tmpdir, wait_bounded};

const FAST: [&str; 12] = [
    "--request-count",
    "2",
    "--isl",
    "8",
    "--osl",
    "4",
    "--ui",
    "none",
    "--sim-itl-ms",
    "0.2",
    "--sim-ttft-ms",
    "1",
];

fn manifest(dir: &Path) -> serde_json::Value {
    read_json(&dir.join("inferbench_manifest.json"))
}

#[test]
fn variants_are_cells_named_by_the_variant_with_their_flags_over_the_command_line() {
    let dir = tmpdir("variants");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--variant",
        "wide: concurrency=3, request_count=6",
        "--sweep-variant",
        "osl=6",
        "--random-seed",
        "10",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("sweep cell 1/2: wide"), "{err}");
    assert!(err.contains("sweep cell 2/2: v1"), "{err}");
    // "wide" overrides --concurrency 1 and --request-count 2; v1 keeps them and sets the OSL.
    let wide = manifest(&dir.join("wide"));
    assert_eq!(wide["plan"]["load"]["concurrency"], 3);
    assert_eq!(wide["plan"]["load"]["request_count"], 6);
    let v1 = manifest(&dir.join("v1"));
    assert_eq!(v1["plan"]["load"]["concurrency"], 1);
    assert_eq!(v1["plan"]["load"]["request_count"], 2);
    // Cell i gets the base seed plus i.
    assert_eq!(wide["random_seed"], 10);
    assert_eq!(v1["random_seed"], 11);
    let sw = read_json(&dir.join("sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(
        sw["metadata"]["sweep_parameters"],
        serde_json::json!([{"name": "variant", "values": ["wide", "v1"]}])
    );
    assert_eq!(sw["metadata"]["num_combinations"], 2);
}

#[test]
fn a_variants_trial_seeds_are_derived_from_its_name() {
    let dir = tmpdir("variants-seeds");
    let mut args = vec![
        "profile",
        "--variant",
        "a: concurrency=1",
        "--variant",
        "b: concurrency=2",
        "--num-profile-runs",
        "2",
        "--random-seed",
        "5",
        "--vary-seed-per-trial",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Cell "a" (index 0) has seed 5; its trial k gets int.from_bytes(sha256(
    // b"5:variation:a:trial:K").digest()[:8], "big") & (2**63 - 1), computed with Python's
    // hashlib: AIPerf labels a scenario by its name.
    let t = |k: &str| manifest(&dir.join("profile_runs").join(k).join("a"))["random_seed"].clone();
    assert_eq!(t("trial_0001"), 2_546_033_942_363_405_239u64);
    assert_eq!(t("trial_0002"), 5_871_077_423_391_378_591u64);
}

#[test]
fn variants_are_checked_before_anything_runs() {
    for (extra, want) in [
        (
            &["--variant", "a: isl=16"][..],
            "a single variant is refused",
        ),
        (
            &["--variant", "a: isl=16", "--variant", "a: isl=32"][..],
            "the name \"a\" is used twice",
        ),
        (
            &[
                "--variant",
                "isl=16",
                "--variant",
                "isl=32",
                "--concurrency",
                "1,2",
            ][..],
            "--variant cannot be used with comma lists (--concurrency)",
        ),
        (
            &["--variant", "a: no_such=1", "--variant", "b: isl=2"][..],
            "--variant a: no_such: not a profile flag",
        ),
        (
            &[
                "--variant",
                "a: num_profile_runs=3",
                "--variant",
                "b: isl=2",
            ][..],
            "--variant a: num_profile_runs: --num-profile-runs holds for the whole sweep",
        ),
        (
            &["--variant", "a: sim_ttft_ms=3", "--variant", "b: isl=2"][..],
            "the simulated server is one for the whole sweep",
        ),
        (
            &["--variant", "a: concurrency=0", "--variant", "b: isl=2"][..],
            "--variant a: --concurrency",
        ),
        (
            &["--variant", "a: streaming=maybe", "--variant", "b: isl=2"][..],
            "--variant a: streaming=maybe: --streaming takes no value",
        ),
        (
            &[
                "--variant",
                "a: search_planner=bayesian",
                "--variant",
                "b: isl=2",
            ][..],
            "--variant a: --search-planner: refused",
        ),
    ] {
        let mut a = vec!["profile", "--ui", "none"];
        a.extend(extra);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}

/// Runs the binary with its stdout on a pseudo-terminal (stderr piped): (exit code, what
/// the terminal received, stderr).
fn run_on_a_terminal(args: &[&str]) -> (Option<i32>, String, String) {
    // SAFETY: plain libc calls on a descriptor this function owns; `ptsname_r` writes a
    // NUL-terminated name into the buffer it is given.
    let (master, path) = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (
            <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd),
            path,
        )
    };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&path)
        .expect("open the terminal");
    let mut child = {
        let mut cmd = bin();
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(slave))
            .stderr(Stdio::piped());
        cmd.spawn().expect("spawn inferbench")
        // `cmd`, and with it this process's copy of the terminal, is dropped here: the
        // reader below sees the end once the child exits.
    };
    let mut master = master;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // A closed terminal reads as EIO on Linux: the end.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    let mut err = String::new();
    let mut e = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let _ = e.read_to_string(&mut err);
        err
    });
    wait_bounded(&mut child, Duration::from_secs(120));
    let code = child.wait().unwrap().code();
    let out = String::from_utf8_lossy(&reader.join().unwrap()).replace("\r\n", "\n");
    (code, out, err_reader.join().unwrap())
}

const HEADER: &str = "output_token_throughput   time_to_first_token   inter_token_latency   request_latency   trials";

/// The sweep tables printed: each one's parameter-and-trials rows (lines after the rule).
fn tables(out: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = out.lines().collect();
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains(HEADER) {
            assert!(lines[i + 1].trim_start().starts_with('━'), "{out}");
            let rows = lines[i + 2..]
                .iter()
                .take_while(|r| !r.trim().is_empty())
                .map(|r| r.to_string())
                .collect();
            found.push(rows);
        }
    }
    found
}

#[test]
fn at_a_terminal_the_sweep_table_grows_a_row_per_cell() {
    let dir = tmpdir("sweep-table");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1,2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let (code, out, err) = run_on_a_terminal(&args);
    assert_eq!(code, Some(0), "{err}");
    let t = tables(&out);
    assert_eq!(t.len(), 2, "{out}");
    assert_eq!(t[0].len(), 1);
    assert_eq!(t[1].len(), 2);
    // The parameter column, then a throughput with two decimals, …, and the trials (1).
    let cols: Vec<&str> = t[1][1].split_whitespace().collect();
    assert_eq!(cols[0], "2", "{:?}", t[1]);
    assert!(
        cols[1].split_once('.').is_some_and(|(_, d)| d.len() == 2),
        "{cols:?}"
    );
    assert_eq!(cols.last(), Some(&"1"));
    assert_eq!(t[1][0], t[0][0]);
    // Suppressed by the flag, and by a single cell.
    args.push("--no-sweep-table");
    let (code, out, err) = run_on_a_terminal(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(tables(&out).is_empty(), "{out}");
    let one = [
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    let mut a: Vec<&str> = one.to_vec();
    a.extend(FAST);
    let (code, out, err) = run_on_a_terminal(&a);
    assert_eq!(code, Some(0), "{err}");
    assert!(tables(&out).is_empty(), "{out}");
}

#[test]
fn a_sweep_table_is_never_printed_to_a_pipe() {
    let dir = tmpdir("sweep-table-pipe");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1,2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(tables(&String::from_utf8_lossy(&o.stdout)).is_empty());
}

#[test]
fn a_configs_no_sweep_table_maps_to_the_flag() {
    let dir = tmpdir("sweep-table-yaml");
    let cfg = dir.join("c.yaml");
    std::fs::write(
        &cfg,
        "schemaVersion: \"2.0\"\nnoSweepTable: true\nbenchmark:\n  model: mock-model\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 4\n    prompts:\n      isl: 8\n      osl: 4\n  phases:\n    type: concurrency\n    concurrency: 1\n    requests: 2\n",
    )
    .unwrap();
    let o = run(&["config", "expand", cfg.to_str().unwrap(), "--simulated"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("--no-sweep-table"), "{text}");
}
