//! `inferbench kube render --shard-count N --image IMAGE [...] -- profile FLAGS...`: the
//! manifests of a sharded run on stdout, for `kubectl apply -f -`; `inferbench kube
//! collect`: the commands that copy the shards back, and the check and merge of the copy
//! (docs/scale-out.md).

use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use inferbench_core::plan::HeaderValue;
use inferbench_kube::collect::{CollectSpec, CopiedEntry, collect_commands, shard_runs};
use inferbench_kube::{ConfigFile, RenderSpec};
use inferbench_run::Failure;

use crate::cli::{KubeArgs, KubeCollectArgs, KubeCommand, KubeRenderArgs};

pub fn run(a: &KubeArgs) -> Result<u8, Failure> {
    match &a.command {
        KubeCommand::Render(r) => render(r),
        KubeCommand::Collect(c) => collect(c),
    }
}

const INSTEAD: &str = "put it in a Secret and give kube render --api-key-secret NAME/KEY (the key) or --header-secret HEADER=NAME/KEY (a header's value)";

/// Refuses any secret in the profile flags, since they are written into the Job spec: the
/// flags are parsed as `profile` parses them (every spelling of `--header`, a JSON object,
/// URL credentials), and so are those of an AIPerf config file shipped in the ConfigMap.
/// Never echoes a value.
fn check_no_secrets(profile: &[String], where_: &str) -> Result<(), String> {
    let argv: Vec<String> = std::iter::once("inferbench".to_string())
        .chain(profile.iter().cloned())
        .collect();
    let m = crate::cli::command_with_unbuilt()
        .try_get_matches_from(&argv)
        .map_err(|e| {
            let first = e.to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ");
            format!("{where_}: not valid profile flags: {first}")
        })?;
    let Some(("profile", p)) = m.subcommand() else {
        return Err(format!("{where_}: `profile` and its flags"));
    };
    // From the command line only: INFERBENCH_API_KEY in this process's environment is
    // not written into the manifest.
    if p.value_source("api_key") == Some(ValueSource::CommandLine) {
        return Err(format!(
            "{where_}: --api-key would be written into the manifest: {INSTEAD}"
        ));
    }
    let headers: Vec<String> = p
        .get_many::<String>("header")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let parsed = crate::cli::parse_headers(&headers).map_err(|e| format!("{where_}: {e}"))?;
    for (name, v) in &parsed {
        if matches!(v, HeaderValue::Secret(_)) {
            return Err(format!(
                "{where_}: --header {name}: a secret header's value would be written into the manifest: {INSTEAD}"
            ));
        }
    }
    let urls = ["url", "server_metrics", "gpu_telemetry"];
    for id in urls {
        for u in p.get_many::<String>(id).into_iter().flatten() {
            let flag = format!("--{}", id.replace('_', "-"));
            // Its errors never show the credentials.
            let (_, creds) =
                crate::cli::url_and_credentials(u).map_err(|e| format!("{where_}: {flag}: {e}"))?;
            if creds.is_some() {
                return Err(format!(
                    "{where_}: {flag}: the URL's credentials would be written into the manifest: drop them from the URL and {INSTEAD} (Authorization=NAME/KEY holding `Basic base64(user:password)`)"
                ));
            }
        }
    }
    Ok(())
}

fn render(a: &KubeRenderArgs) -> Result<u8, Failure> {
    let mut node_selector = Vec::new();
    for s in &a.node_selector {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| Failure::input(format!("--node-selector {s:?}: expected KEY=VALUE")))?;
        node_selector.push((k.to_string(), v.to_string()));
    }
    let tolerations = a
        .toleration
        .iter()
        .map(|t| inferbench_kube::parse_toleration(t).map_err(Failure::input))
        .collect::<Result<Vec<_>, Failure>>()?;
    let mut files = Vec::new();
    for p in &a.config_file {
        let content = std::fs::read_to_string(p)
            .map_err(|e| Failure::input(format!("--config-file {}: {e}", p.display())))?;
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Failure::input(format!("--config-file {}: no file name", p.display()))
            })?;
        files.push(ConfigFile { name, content });
    }
    check_no_secrets(&a.profile, "after --").map_err(Failure::input)?;
    for (p, f) in a.config_file.iter().zip(&files) {
        // An AIPerf config (YAML or JSON) becomes profile flags; other files (a trace, a
        // dataset) carry no flags.
        let opts = crate::aiperf_config::Options {
            scenario: None,
            simulated: false,
            cli: true,
        };
        let looks_config = [".yaml", ".yml", ".json"]
            .iter()
            .any(|x| f.name.ends_with(x));
        if looks_config && let Ok(flags) = crate::aiperf_config::profile_flags(p, &opts) {
            let mut argv = vec!["profile".to_string()];
            argv.extend(flags);
            check_no_secrets(&argv, &format!("--config-file {}", p.display()))
                .map_err(Failure::input)?;
        }
    }
    let api_key_secret = a
        .api_key_secret
        .as_deref()
        .map(|s| inferbench_kube::parse_secret_ref("--api-key-secret", s))
        .transpose()
        .map_err(Failure::input)?;
    let mut header_secrets = Vec::new();
    for h in &a.header_secret {
        let hs = inferbench_kube::parse_header_secret(h).map_err(Failure::input)?;
        // The run redacts the values of secret-named headers only (docs/secrets.md).
        if !inferbench_core::plan::is_sensitive_header(&hs.header) {
            return Err(Failure::input(format!(
                "--header-secret {}: the name does not mark it secret, so the run would record its value; give it with -- --header, or use a name holding one of: {}",
                hs.header,
                inferbench_core::plan::SENSITIVE_HEADER_PARTS.join(", ")
            )));
        }
        header_secrets.push(hs);
    }
    let spec = RenderSpec {
        name: a.name.clone(),
        namespace: a.namespace.clone(),
        shard_count: a.shard_count,
        image: a.image.clone(),
        results_pvc: a.results_pvc.clone(),
        cpu: a.cpu.clone(),
        memory: a.memory.clone(),
        node_selector,
        tolerations,
        active_deadline_seconds: a.active_deadline_seconds,
        ttl_seconds_after_finished: a.ttl_seconds_after_finished,
        files,
        start_at: a.start_at.clone(),
        profile: a.profile.clone(),
        api_key_secret,
        header_secrets,
    };
    let docs = inferbench_kube::render(&spec).map_err(Failure::input)?;
    let text = match a.output.as_str() {
        "yaml" => inferbench_kube::yaml::documents(&docs),
        "json" => {
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": docs});
            serde_json::to_string_pretty(&list).map_err(|e| Failure::run(e.to_string()))? + "\n"
        }
        other => {
            return Err(Failure::input(format!("--output {other:?}: yaml or json")));
        }
    };
    print!("{text}");
    Ok(0)
}

/// The run directories under `dir`, at most `depth` levels down (a run directory holds a
/// manifest; one is not searched further).
fn runs_under(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    if dir.join(inferbench_core::manifest::MANIFEST_FILE).is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    if depth == 0 {
        return Ok(());
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    for s in subs {
        runs_under(&s, depth - 1, out)?;
    }
    Ok(())
}

fn collect(a: &KubeCollectArgs) -> Result<u8, Failure> {
    let local = a
        .from
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("./{}", a.name)));
    let output = a
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("./{}-merged", a.name)));
    let Some(from) = &a.from else {
        let spec = CollectSpec {
            name: a.name.clone(),
            namespace: a.namespace.clone(),
            results_pvc: a.results_pvc.clone(),
            image: a.image.clone(),
            shard_count: a.shard_count,
            local_dir: local.display().to_string(),
            output_dir: output.display().to_string(),
        };
        for c in collect_commands(&spec) {
            println!("{c}");
        }
        return Ok(0);
    };
    if a.output_dir.is_none() {
        return Err(Failure::input(
            "--from needs --output-dir (the merged run directory)",
        ));
    }
    let mut entries = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(from)
        .map_err(|e| Failure::input(format!("--from {}: {e}", from.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    for p in names {
        let mut runs = Vec::new();
        runs_under(&p, 2, &mut runs)?;
        entries.push(CopiedEntry {
            name: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            runs: runs.iter().map(|r| r.display().to_string()).collect(),
        });
    }
    let dirs: Vec<PathBuf> = shard_runs(a.shard_count, &entries)
        .map_err(|e| Failure::input(format!("--from {}: {e}", from.display())))?
        .into_iter()
        .map(PathBuf::from)
        .collect();
    crate::merge_cmd::run(&crate::cli::MergeArgs {
        dirs,
        output_dir: output,
    })
}
