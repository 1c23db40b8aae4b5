//! The Kubernetes API objects a sharded run needs, field for field as the API names them
//! (core/v1 and batch/v1, as of 1.33); absent options are omitted.

use std::collections::BTreeMap;

use serde::Serialize;

fn none<T>(v: &Option<T>) -> bool {
    v.is_none()
}

fn empty<T>(v: &[T]) -> bool {
    v.is_empty()
}

fn empty_map(v: &BTreeMap<String, String>) -> bool {
    v.is_empty()
}

#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    pub name: String,
    pub namespace: String,
    #[serde(skip_serializing_if = "empty_map")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "empty_map")]
    pub annotations: BTreeMap<String, String>,
}

/// Pod-template metadata (no name or namespace).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMeta {
    #[serde(skip_serializing_if = "empty_map")]
    pub labels: BTreeMap<String, String>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: ServiceSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `None`: headless.
    #[serde(rename = "clusterIP")]
    pub cluster_ip: String,
    pub selector: BTreeMap<String, String>,
    /// Pods resolve before they are Ready (the time reference is needed at start-up).
    pub publish_not_ready_addresses: bool,
    pub ports: Vec<ServicePort>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    pub name: String,
    pub port: i32,
    pub protocol: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMap {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub data: BTreeMap<String, String>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: JobSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub completion_mode: String,
    pub completions: i32,
    pub parallelism: i32,
    pub backoff_limit_per_index: i32,
    pub max_failed_indexes: i32,
    pub pod_replacement_policy: String,
    pub pod_failure_policy: PodFailurePolicy,
    pub active_deadline_seconds: i64,
    pub ttl_seconds_after_finished: i32,
    pub template: PodTemplateSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicy {
    pub rules: Vec<PodFailurePolicyRule>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyRule {
    pub action: String,
    #[serde(skip_serializing_if = "none")]
    pub on_exit_codes: Option<OnExitCodes>,
    #[serde(skip_serializing_if = "empty")]
    pub on_pod_conditions: Vec<OnPodCondition>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OnExitCodes {
    pub container_name: String,
    pub operator: String,
    pub values: Vec<i32>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OnPodCondition {
    #[serde(rename = "type")]
    pub kind: String,
    /// Required by the 1.33 schema (1.37 defaults it to "True").
    pub status: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateSpec {
    pub metadata: TemplateMeta,
    pub spec: PodSpec,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: String,
    /// With the headless Service of this name: pods resolve as `<job>-<index>.<subdomain>`.
    pub subdomain: String,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    #[serde(skip_serializing_if = "empty_map")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "empty")]
    pub tolerations: Vec<Toleration>,
    /// The time server, as a native sidecar (an init container that keeps running).
    pub init_containers: Vec<Container>,
    pub containers: Vec<Container>,
    pub volumes: Vec<Volume>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: String,
    pub label_selector: LabelSelector,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    pub key: String,
    pub operator: String,
    #[serde(skip_serializing_if = "none")]
    pub value: Option<String>,
    pub effect: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub image: String,
    #[serde(skip_serializing_if = "none")]
    pub restart_policy: Option<String>,
    pub command: Vec<String>,
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "empty")]
    pub env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "empty")]
    pub ports: Vec<ContainerPort>,
    pub resources: Resources,
    #[serde(skip_serializing_if = "empty")]
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub name: String,
    pub container_port: i32,
    pub protocol: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: String,
    #[serde(skip_serializing_if = "none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(skip_serializing_if = "none")]
    pub field_ref: Option<FieldRef>,
    /// A key of a Secret: how a pod gets an API key or a secret header's value without the
    /// manifest holding it.
    #[serde(skip_serializing_if = "none")]
    pub secret_key_ref: Option<SecretKeySelector>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeySelector {
    pub name: String,
    pub key: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FieldRef {
    pub field_path: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    pub requests: BTreeMap<String, String>,
    pub limits: BTreeMap<String, String>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    pub name: String,
    pub mount_path: String,
    pub read_only: bool,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    pub name: String,
    #[serde(skip_serializing_if = "none")]
    pub persistent_volume_claim: Option<PvcSource>,
    #[serde(skip_serializing_if = "none")]
    pub config_map: Option<ConfigMapSource>,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PvcSource {
    pub claim_name: String,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapSource {
    pub name: String,
}
