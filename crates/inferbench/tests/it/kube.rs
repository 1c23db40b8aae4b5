//! `kube render` never writes a secret into a manifest (every route refused by name, the
//! Secret references rendered instead), a sharded run's shard and merge blocks hold no
//! secret, and `kube collect` prints the copy commands and checks and merges a copied set.

use std::path::{Path, PathBuf};

use crate::common::{MockServer, read_json, run, stderr, tmpdir};

/// Every file under `dir`, as lossy text.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn render(extra: &[&str], profile: &[&str]) -> std::process::Output {
    let mut a = vec![
        "kube",
        "render",
        "--shard-count",
        "2",
        "--image",
        "registry.example/inferbench:0.1.0",
    ];
    a.extend(extra);
    a.extend(["--", "profile", "-m", "model", "--request-count", "10"]);
    a.extend(profile);
    run(&a)
}

#[test]
fn every_route_of_a_secret_is_refused_by_name() {
    const S: &str = "sk-planted-3141";
    let url = "http://vllm:8000";
    let routes: Vec<(Vec<String>, &str)> = vec![
        (vec!["--api-key".into(), S.into()], "--api-key"),
        (vec![format!("--api-key={S}")], "--api-key"),
        (
            vec!["-H".into(), format!("Authorization:Bearer {S}")],
            "--header Authorization",
        ),
        (
            vec![format!("--header=X-Api-Key:{S}")],
            "--header X-Api-Key",
        ),
        (vec![format!("-HX-Auth-Token:{S}")], "--header X-Auth-Token"),
        (
            vec!["-H".into(), format!("{{\"Cookie\": \"{S}\"}}")],
            "--header Cookie",
        ),
        // `-H` takes several values: the secret one second.
        (
            vec!["-H".into(), "X-Plain:1".into(), format!("x-session-id:{S}")],
            "--header x-session-id",
        ),
        (
            vec!["--url".into(), format!("http://bob:{S}@vllm:8000")],
            "--url",
        ),
        (vec![format!("-ubob:{S}@vllm:8000")], "--url"),
        (
            vec![
                "--url".into(),
                url.into(),
                "--server-metrics".into(),
                format!("http://m:{S}@vllm:9000/metrics"),
            ],
            "--server-metrics",
        ),
    ];
    for (flags, named) in &routes {
        let mut p: Vec<&str> = flags.iter().map(String::as_str).collect();
        if !flags
            .iter()
            .any(|f| f.starts_with("--url") || f.starts_with("-u"))
        {
            p.extend(["--url", url]);
        }
        let o = render(&[], &p);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(named), "{flags:?}: {err}");
        assert!(err.contains("--api-key-secret NAME/KEY"), "{err}");
        assert!(!err.contains(S) && !String::from_utf8_lossy(&o.stdout).contains(S));
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }

    // An AIPerf config shipped in the ConfigMap is read as profile flags too.
    let dir = tmpdir("kube-secret-config");
    let cfg = dir.join("run.yaml");
    std::fs::write(
        &cfg,
        format!(
            "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    url: {url}\n    apiKey: {S}\n  dataset:\n    type: synthetic\n    entries: 8\n    prompts:\n      isl: 16\n      osl: 4\n  phases:\n    type: concurrency\n    concurrency: 2\n    requests: 4\n"
        ),
    )
    .unwrap();
    let o = render(&["--config-file", cfg.to_str().unwrap()], &["--url", url]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--config-file") && err.contains("--api-key"),
        "{err}"
    );
    assert!(!err.contains(S));

    // A secret-header reference must name a secret header (else the run records it).
    let o = render(&["--header-secret", "X-Plain=creds/k"], &["--url", url]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--header-secret X-Plain"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn secrets_render_as_references_in_yaml_and_json() {
    const S: &str = "sk-env-2718";
    for output in ["yaml", "json"] {
        let o = crate::common::bin()
            .args([
                "kube",
                "render",
                "--shard-count",
                "2",
                "--image",
                "img:1",
                "--output",
                output,
                "--api-key-secret",
                "llm-creds/api-key",
                "--header-secret",
                "X-Auth-Token=llm-creds/token",
                "--",
                "profile",
                "--url",
                "http://vllm:8000",
                "-m",
                "model",
                "--request-count",
                "10",
            ])
            // The render process's own key is never the manifest's.
            .env("INFERBENCH_API_KEY", S)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(!text.contains(S), "{output}");
        assert!(text.contains("secretKeyRef"), "{output}");
        assert!(text.contains("llm-creds"), "{output}");
        assert!(
            text.contains("X-Auth-Token:$(INFERBENCH_HEADER_0)"),
            "{output}"
        );
        assert!(text.contains("INFERBENCH_API_KEY"), "{output}");
    }
}

fn profile(url: &str, dir: &Path, index: u32, key: &str, token: &str) -> Vec<String> {
    [
        "profile",
        "--url",
        url,
        "-m",
        "mock-model",
        "--streaming",
        "--request-rate",
        "200",
        "--request-count",
        "8",
        "--random-seed",
        "5",
        "--isl",
        "8",
        "--osl",
        "2",
        "--ui",
        "none",
        "--shard-count",
        "2",
        "--shard-index",
        &index.to_string(),
        "--api-key",
        key,
        "-H",
        &format!("X-Auth-Token:{token}"),
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// The shards' directories laid out as `kube render` writes them (`<name>/shard-<I>/`),
/// the collect commands printed, the copy checked and merged, and no secret in any file.
#[test]
fn a_copied_set_is_collected_and_no_secret_is_kept() {
    const KEY: &str = "sk-shard-1618";
    const TOKEN: &str = "tok-shard-1414";
    let server = MockServer::start(&[]);
    let root = tmpdir("kube-collect");
    let copy = root.join("bench");
    for i in 0..2 {
        let a = profile(&server.url, &copy.join(format!("shard-{i}")), i, KEY, TOKEN);
        let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
    }

    let o = run(&[
        "kube",
        "collect",
        "--shard-count",
        "2",
        "--name",
        "bench",
        "--namespace",
        "load",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cmds = String::from_utf8(o.stdout).unwrap();
    assert!(
        cmds.contains("kubectl -n load cp bench-collect:/results/bench ./bench"),
        "{cmds}"
    );
    assert!(cmds.contains("inferbench kube collect --shard-count 2 --from ./bench"));

    // One shard missing: refused by name.
    let merged = root.join("merged");
    let o = run(&[
        "kube",
        "collect",
        "--shard-count",
        "3",
        "--from",
        copy.to_str().unwrap(),
        "--output-dir",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("1 of 3 shards missing: shard-2"),
        "{}",
        stderr(&o)
    );

    let o = run(&[
        "kube",
        "collect",
        "--shard-count",
        "2",
        "--from",
        copy.to_str().unwrap(),
        "--output-dir",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = read_json(&merged.join("inferbench_manifest.json"));
    assert_eq!(m["merge"]["shard_count"], 2);
    assert_eq!(m["merge"]["shards"].as_array().unwrap().len(), 2);
    assert_eq!(crate::common::evidence_records(&merged).len(), 8);
    // Every shard's host in the merge block, and the identity says how many hosts.
    for i in 0..2 {
        let s = &m["merge"]["shards"][i];
        assert!(s["host"]["hostname"].is_string(), "{s}");
        assert!(s["clock_start"]["taken_at_unix_ns"].is_u64(), "{s}");
        assert!(s["clock_end"]["taken_at_unix_ns"].is_u64(), "{s}");
    }
    assert_eq!(m["host"]["merged_hosts"], 2, "{}", m["host"]);

    // The run directory: the artifact directory itself, or the one run under it.
    let shard0: PathBuf = std::iter::once(copy.join("shard-0"))
        .chain(
            std::fs::read_dir(copy.join("shard-0"))
                .unwrap()
                .flatten()
                .map(|e| e.path()),
        )
        .find(|p| p.join("inferbench_manifest.json").is_file())
        .unwrap();
    let s0 = read_json(&shard0.join("inferbench_manifest.json"));
    // Both manifests are valid under the checked-in schema (shard, merge, plan.shard and
    // host.merged_hosts included), and a wrong shard block is not.
    let schema = read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    for (what, doc) in [("shard 0", &s0), ("merged", &m)] {
        let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}");
    }
    let mut bad = s0.clone();
    bad["shard"]["late"] = serde_json::json!("no");
    assert!(!v.is_valid(&bad));
    let mut bad = m.clone();
    bad["merge"]["shards"][0]["extra"] = serde_json::json!(1);
    assert!(!v.is_valid(&bad));

    for (what, text) in [
        ("the shard block", s0["shard"].to_string()),
        ("the merge block", m["merge"].to_string()),
        ("the copied shards", all_text(&copy)),
        ("the merged run", all_text(&merged)),
    ] {
        assert!(!text.contains(KEY), "{what} holds the API key");
        assert!(!text.contains(TOKEN), "{what} holds the header's value");
    }
}
