//! `inferbench kube render --shard-count N --image IMAGE [...] -- profile FLAGS...`: the
//! manifests of a sharded run on stdout, for `kubectl apply -f -` (docs/scale-out.md).

use inferbench_kube::{ConfigFile, RenderSpec};
use inferbench_run::Failure;

use crate::cli::{KubeArgs, KubeCommand, KubeRenderArgs};

pub fn run(a: &KubeArgs) -> Result<u8, Failure> {
    match &a.command {
        KubeCommand::Render(r) => render(r),
    }
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
