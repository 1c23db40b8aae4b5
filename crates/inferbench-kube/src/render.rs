//! The manifests of a sharded run, from the user's `profile` flags.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::*;
use crate::{CONFIGMAP_LIMIT, INPUTS_MOUNT, LATE_START_EXIT, RESULTS_MOUNT, TIME_PORT};

/// A file shipped to every pod in the ConfigMap, mounted at `INPUTS_MOUNT/<name>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigFile {
    pub name: String,
    pub content: String,
}

/// `--toleration KEY[=VALUE]:EFFECT`.
pub use crate::api::Toleration;

/// What `inferbench kube render` was given.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSpec {
    pub name: String,
    pub namespace: String,
    pub shard_count: u32,
    pub image: String,
    pub results_pvc: String,
    pub cpu: String,
    pub memory: String,
    pub node_selector: Vec<(String, String)>,
    pub tolerations: Vec<Toleration>,
    pub active_deadline_seconds: i64,
    pub ttl_seconds_after_finished: i32,
    pub files: Vec<ConfigFile>,
    /// `--start-at T0`, passed to every shard.
    pub start_at: Option<String>,
    /// `profile` and its flags.
    pub profile: Vec<String>,
    /// `--api-key-secret NAME/KEY`: the shard container's `INFERBENCH_API_KEY` (which
    /// `profile --api-key` reads) from that key of a Secret, so the manifest never holds it.
    pub api_key_secret: Option<SecretRef>,
    /// `--header-secret HEADER=NAME/KEY`: the header's value from a Secret key, through an
    /// env variable that Kubernetes expands in the args (`--header HEADER:$(VAR)`).
    pub header_secrets: Vec<HeaderSecret>,
}

/// A key of a Kubernetes Secret in the run's namespace.
#[derive(Clone, Debug, PartialEq)]
pub struct SecretRef {
    pub name: String,
    pub key: String,
}

/// A header whose value comes from a Secret.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderSecret {
    pub header: String,
    pub secret: SecretRef,
}

/// The env variable `profile --api-key` reads (`crates/inferbench/src/cli/profile_args.rs`).
pub const API_KEY_ENV: &str = "INFERBENCH_API_KEY";
/// The env variable of the `i`-th `--header-secret`.
pub fn header_env(i: usize) -> String {
    format!("INFERBENCH_HEADER_{i}")
}

/// `NAME/KEY` of `flag`: a Secret's name (a DNS-1123 subdomain) and one of its keys.
pub fn parse_secret_ref(flag: &str, s: &str) -> Result<SecretRef, String> {
    let (name, key) = s
        .split_once('/')
        .ok_or_else(|| format!("{flag} {s:?}: expected SECRET_NAME/KEY"))?;
    let name_ok = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !name_ok {
        return Err(format!(
            "{flag} {s:?}: the Secret's name must be lower-case letters, digits, '-' or '.'"
        ));
    }
    let key_ok = !key.is_empty()
        && key.len() <= 253
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if !key_ok {
        return Err(format!(
            "{flag} {s:?}: the key must be letters, digits, '-', '_' or '.'"
        ));
    }
    Ok(SecretRef {
        name: name.into(),
        key: key.into(),
    })
}

/// `HEADER=NAME/KEY` of `--header-secret`.
pub fn parse_header_secret(s: &str) -> Result<HeaderSecret, String> {
    let (header, r) = s
        .split_once('=')
        .ok_or_else(|| format!("--header-secret {s:?}: expected HEADER=SECRET_NAME/KEY"))?;
    let header = header.trim();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if header.is_empty() || !header.bytes().all(token) {
        return Err(format!(
            "--header-secret {s:?}: {header:?} is not a header name"
        ));
    }
    Ok(HeaderSecret {
        header: header.into(),
        secret: parse_secret_ref("--header-secret", r)?,
    })
}

fn secret_env(name: String, r: &SecretRef) -> EnvVar {
    EnvVar {
        name,
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: None,
            secret_key_ref: Some(SecretKeySelector {
                name: r.name.clone(),
                key: r.key.clone(),
            }),
        }),
    }
}

/// Flags each pod gets from the manifest; the user's flags may not set them.
const OWN_FLAGS: [&str; 5] = [
    "--shard-count",
    "--shard-index",
    "--artifact-dir",
    "--time-reference",
    "--start-at",
];

/// A DNS-1123 label short enough that `<name>-<index>` stays one (pod hostnames).
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 50
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--name {name:?}: must be 1 to 50 lower-case letters, digits or '-', not starting or ending with '-'"
        ))
    }
}

/// `--toleration KEY[=VALUE]:EFFECT` (`Exists` without a value).
pub fn parse_toleration(s: &str) -> Result<Toleration, String> {
    let (kv, effect) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("--toleration {s:?}: expected KEY[=VALUE]:EFFECT"))?;
    if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect) {
        return Err(format!(
            "--toleration {s:?}: EFFECT must be NoSchedule, PreferNoSchedule or NoExecute"
        ));
    }
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    if key.is_empty() {
        return Err(format!("--toleration {s:?}: the key is empty"));
    }
    Ok(Toleration {
        key: key.into(),
        operator: if value.is_some() { "Equal" } else { "Exists" }.into(),
        value,
        effect: effect.into(),
    })
}

/// The Service, the ConfigMap (when files are given) and the Job, in apply order.
pub fn render(s: &RenderSpec) -> Result<Vec<Value>, String> {
    check_name(&s.name)?;
    if !(1..=100_000).contains(&s.shard_count) {
        return Err(format!(
            "--shard-count {}: must be 1 to 100000 (an Indexed Job's limit)",
            s.shard_count
        ));
    }
    if s.profile.first().map(String::as_str) != Some("profile") {
        return Err("after --: `profile` and its flags, e.g. -- profile --url http://server:8000 -m model --request-rate 100 --request-count 10000".into());
    }
    for a in &s.profile {
        let flag = a.split('=').next().unwrap_or(a);
        // The binary checks every route a secret can take (`kube_cmd`); this one is
        // refused here too, since a library caller could pass it.
        if flag == "--api-key" {
            return Err(
                "after --: --api-key would be written into the manifest; put the key in a Secret and give --api-key-secret NAME/KEY to kube render".into(),
            );
        }
        if OWN_FLAGS.contains(&flag) {
            return Err(format!(
                "after --: {flag} is set per pod by the manifest (give --shard-count{} to kube render)",
                if flag == "--start-at" {
                    " or --start-at"
                } else {
                    ""
                }
            ));
        }
    }
    let size: usize = s.files.iter().map(|f| f.name.len() + f.content.len()).sum();
    if size > CONFIGMAP_LIMIT {
        return Err(format!(
            "--config-file: {size} bytes is over a ConfigMap's 1 MiB: put the files in the image or on the results volume and give their paths in the profile flags"
        ));
    }
    let labels = BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            "inferbench".to_string(),
        ),
        ("inferbench.dev/run".to_string(), s.name.clone()),
    ]);
    let meta = |name: String| ObjectMeta {
        name,
        namespace: s.namespace.clone(),
        labels: labels.clone(),
        annotations: BTreeMap::new(),
    };
    let selector = BTreeMap::from([("inferbench.dev/run".to_string(), s.name.clone())]);
    let mut out = Vec::new();
    let service = Service {
        api_version: "v1",
        kind: "Service",
        metadata: meta(s.name.clone()),
        spec: ServiceSpec {
            cluster_ip: "None".into(),
            selector: selector.clone(),
            publish_not_ready_addresses: true,
            ports: vec![ServicePort {
                name: "time".into(),
                port: TIME_PORT,
                protocol: "UDP".into(),
            }],
        },
    };
    out.push(to_value(&service)?);
    let inputs = format!("{}-inputs", s.name);
    if !s.files.is_empty() {
        let cm = ConfigMap {
            api_version: "v1",
            kind: "ConfigMap",
            metadata: meta(inputs.clone()),
            data: s
                .files
                .iter()
                .map(|f| (f.name.clone(), f.content.clone()))
                .collect(),
        };
        out.push(to_value(&cm)?);
    }
    let mut args = s.profile.clone();
    args.extend([
        "--shard-count".to_string(),
        s.shard_count.to_string(),
        "--artifact-dir".into(),
        format!("{RESULTS_MOUNT}/{}/shard-$(SHARD_INDEX)", s.name),
        "--time-reference".into(),
        format!(
            "{}-0.{}.{}.svc.cluster.local:{TIME_PORT}",
            s.name, s.name, s.namespace
        ),
    ]);
    if let Some(t0) = &s.start_at {
        args.extend(["--start-at".to_string(), t0.clone()]);
    }
    for (i, h) in s.header_secrets.iter().enumerate() {
        args.extend([
            "--header".to_string(),
            format!("{}:$({})", h.header, header_env(i)),
        ]);
    }
    let resources = Resources {
        requests: BTreeMap::from([
            ("cpu".to_string(), s.cpu.clone()),
            ("memory".to_string(), s.memory.clone()),
        ]),
        limits: BTreeMap::from([
            ("cpu".to_string(), s.cpu.clone()),
            ("memory".to_string(), s.memory.clone()),
        ]),
    };
    let mut mounts = vec![VolumeMount {
        name: "results".into(),
        mount_path: RESULTS_MOUNT.into(),
        read_only: false,
    }];
    let mut volumes = vec![Volume {
        name: "results".into(),
        persistent_volume_claim: Some(PvcSource {
            claim_name: s.results_pvc.clone(),
        }),
        config_map: None,
    }];
    if !s.files.is_empty() {
        mounts.push(VolumeMount {
            name: "inputs".into(),
            mount_path: INPUTS_MOUNT.into(),
            read_only: true,
        });
        volumes.push(Volume {
            name: "inputs".into(),
            persistent_volume_claim: None,
            config_map: Some(ConfigMapSource { name: inputs }),
        });
    }
    let time_server = Container {
        name: "time-server".into(),
        image: s.image.clone(),
        restart_policy: Some("Always".into()),
        command: vec!["inferbench".into()],
        args: vec![
            "time-server".into(),
            "--listen".into(),
            format!("0.0.0.0:{TIME_PORT}"),
        ],
        env: vec![],
        ports: vec![ContainerPort {
            name: "time".into(),
            container_port: TIME_PORT,
            protocol: "UDP".into(),
        }],
        resources: Resources {
            requests: BTreeMap::from([
                ("cpu".to_string(), "50m".to_string()),
                ("memory".to_string(), "32Mi".to_string()),
            ]),
            limits: BTreeMap::from([
                ("cpu".to_string(), "100m".to_string()),
                ("memory".to_string(), "64Mi".to_string()),
            ]),
        },
        volume_mounts: vec![],
    };
    let mut env = vec![EnvVar {
        name: "SHARD_INDEX".into(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(FieldRef {
                field_path: "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                    .into(),
            }),
            secret_key_ref: None,
        }),
    }];
    if let Some(r) = &s.api_key_secret {
        env.push(secret_env(API_KEY_ENV.into(), r));
    }
    for (i, h) in s.header_secrets.iter().enumerate() {
        env.push(secret_env(header_env(i), &h.secret));
    }
    let shard = Container {
        name: "inferbench".into(),
        image: s.image.clone(),
        restart_policy: None,
        command: vec!["inferbench".into()],
        args,
        env,
        ports: vec![],
        resources,
        volume_mounts: mounts,
    };
    let n = s.shard_count as i32;
    let job = Job {
        api_version: "batch/v1",
        kind: "Job",
        metadata: meta(s.name.clone()),
        spec: JobSpec {
            completion_mode: "Indexed".into(),
            completions: n,
            parallelism: n,
            backoff_limit_per_index: 0,
            max_failed_indexes: 0,
            pod_replacement_policy: "Failed".into(),
            pod_failure_policy: PodFailurePolicy {
                rules: vec![
                    PodFailurePolicyRule {
                        action: "FailIndex".into(),
                        on_exit_codes: Some(OnExitCodes {
                            container_name: "inferbench".into(),
                            operator: "In".into(),
                            values: vec![LATE_START_EXIT],
                        }),
                        on_pod_conditions: vec![],
                    },
                    PodFailurePolicyRule {
                        action: "Ignore".into(),
                        on_exit_codes: None,
                        on_pod_conditions: vec![OnPodCondition {
                            kind: "DisruptionTarget".into(),
                            status: "True".into(),
                        }],
                    },
                ],
            },
            active_deadline_seconds: s.active_deadline_seconds,
            ttl_seconds_after_finished: s.ttl_seconds_after_finished,
            template: PodTemplateSpec {
                metadata: TemplateMeta {
                    labels: labels.clone(),
                },
                spec: PodSpec {
                    restart_policy: "Never".into(),
                    subdomain: s.name.clone(),
                    topology_spread_constraints: vec![TopologySpreadConstraint {
                        max_skew: 1,
                        topology_key: "kubernetes.io/hostname".into(),
                        when_unsatisfiable: "DoNotSchedule".into(),
                        label_selector: LabelSelector {
                            match_labels: selector,
                        },
                    }],
                    node_selector: s.node_selector.iter().cloned().collect(),
                    tolerations: s.tolerations.clone(),
                    init_containers: vec![time_server],
                    containers: vec![shard],
                    volumes,
                },
            },
        },
    };
    out.push(to_value(&job)?);
    Ok(out)
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}
