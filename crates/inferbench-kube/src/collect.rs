//! `inferbench kube collect`: the commands that bring a finished run's shard directories
//! back from the results volume, and the check of a copied set before `merge`.
//!
//! The shards write to `RESULTS_MOUNT/<name>/shard-<I>/` on the claim; a helper pod that
//! mounts the claim lets `kubectl cp` (tar in the helper's image) copy `<name>/` out. Pure:
//! the caller lists the directories.

use serde_json::json;

use crate::RESULTS_MOUNT;

/// Where the shards' results are and how to reach them.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectSpec {
    pub name: String,
    pub namespace: String,
    pub results_pvc: String,
    /// The helper pod's image: it needs `tar` (for `kubectl cp`) and `sleep`.
    pub image: String,
    pub shard_count: u32,
    /// Where `kubectl cp` puts `<name>/` (the local copy of the shard directories).
    pub local_dir: String,
    /// The merged run directory.
    pub output_dir: String,
}

/// A shell word: kept bare when it is plain, else single-quoted.
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The commands, one a line, for a POSIX shell: wait for the Job, start a helper pod on
/// the claim, copy the run's directory out, delete the helper, check and merge the copy.
pub fn collect_commands(s: &CollectSpec) -> Vec<String> {
    let pod = format!("{}-collect", s.name);
    let overrides = json!({
        "spec": {
            "containers": [{
                "name": "collect",
                "image": s.image,
                "command": ["sleep", "3600"],
                "volumeMounts": [{"name": "results", "mountPath": RESULTS_MOUNT}],
            }],
            "volumes": [{
                "name": "results",
                "persistentVolumeClaim": {"claimName": s.results_pvc, "readOnly": true},
            }],
        }
    });
    let k = format!("kubectl -n {}", quote(&s.namespace));
    vec![
        format!(
            "{k} wait --for=condition=complete job/{} --timeout=24h",
            quote(&s.name)
        ),
        format!(
            "{k} run {} --image={} --restart=Never --overrides={}",
            quote(&pod),
            quote(&s.image),
            quote(&overrides.to_string())
        ),
        format!(
            "{k} wait --for=condition=ready pod/{} --timeout=10m",
            quote(&pod)
        ),
        format!(
            "{k} cp {}:{RESULTS_MOUNT}/{} {}",
            quote(&pod),
            s.name,
            quote(&s.local_dir)
        ),
        format!("{k} delete pod {} --wait=false", quote(&pod)),
        format!(
            "inferbench kube collect --shard-count {} --from {} --output-dir {}",
            s.shard_count,
            quote(&s.local_dir),
            quote(&s.output_dir)
        ),
    ]
}

/// One entry of the copied directory: its name and the run directories found in it.
#[derive(Clone, Debug, PartialEq)]
pub struct CopiedEntry {
    pub name: String,
    pub runs: Vec<String>,
}

/// The run directory of every shard 0..count in index order, from the copy's entries
/// (`shard-<I>` each holding exactly one run). Every index must be there once; anything
/// else named `shard-…` is refused, other names are ignored (e.g. a `lost+found`).
pub fn shard_runs(count: u32, entries: &[CopiedEntry]) -> Result<Vec<String>, String> {
    let mut found: Vec<Option<String>> = vec![None; count as usize];
    for e in entries {
        let Some(rest) = e.name.strip_prefix("shard-") else {
            continue;
        };
        let index: u32 = rest
            .parse()
            .ok()
            .filter(|i: &u32| i.to_string() == rest)
            .ok_or_else(|| format!("{}: not shard-<index>", e.name))?;
        if index >= count {
            return Err(format!(
                "{}: index {index} is not below --shard-count {count}",
                e.name
            ));
        }
        let run = match e.runs.as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(format!(
                    "{}: holds no run directory (the shard failed or was not copied)",
                    e.name
                ));
            }
            many => {
                return Err(format!(
                    "{}: holds {} run directories; one shard, one run ({})",
                    e.name,
                    many.len(),
                    many.join(", ")
                ));
            }
        };
        found[index as usize] = Some(run);
    }
    let missing: Vec<String> = found
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_none())
        .map(|(i, _)| format!("shard-{i}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} of {count} shards missing: {}",
            missing.len(),
            missing.join(", ")
        ));
    }
    Ok(found.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, runs: &[&str]) -> CopiedEntry {
        CopiedEntry {
            name: name.into(),
            runs: runs.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn every_index_once_in_order() {
        let e = [
            entry("shard-1", &["b/shard-1/run"]),
            entry("lost+found", &[]),
            entry("shard-0", &["b/shard-0/run"]),
        ];
        assert_eq!(
            shard_runs(2, &e).unwrap(),
            ["b/shard-0/run", "b/shard-1/run"]
        );
    }

    #[test]
    fn a_missing_extra_or_doubled_shard_is_named() {
        let e = [entry("shard-0", &["r0"])];
        assert_eq!(
            shard_runs(3, &e).unwrap_err(),
            "2 of 3 shards missing: shard-1, shard-2"
        );
        let e = [entry("shard-0", &["r0"]), entry("shard-2", &["r2"])];
        assert!(
            shard_runs(2, &e)
                .unwrap_err()
                .starts_with("shard-2: index 2")
        );
        let e = [entry("shard-0", &["r0", "r0b"])];
        assert!(
            shard_runs(1, &e)
                .unwrap_err()
                .contains("holds 2 run directories")
        );
        let e = [entry("shard-0", &[])];
        assert!(shard_runs(1, &e).unwrap_err().contains("holds no run"));
        // `shard-01` would be a second spelling of index 1.
        let e = [entry("shard-01", &["r"])];
        assert!(shard_runs(2, &e).unwrap_err().contains("not shard-<index>"));
    }

    #[test]
    fn the_commands_copy_the_runs_path_and_quote_the_overrides() {
        let c = collect_commands(&CollectSpec {
            name: "bench".into(),
            namespace: "load".into(),
            results_pvc: "inferbench-results".into(),
            image: "busybox:1.36".into(),
            shard_count: 4,
            local_dir: "./bench".into(),
            output_dir: "./bench-merged".into(),
        });
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[0],
            "kubectl -n load wait --for=condition=complete job/bench --timeout=24h"
        );
        assert_eq!(
            c[3],
            "kubectl -n load cp bench-collect:/results/bench ./bench"
        );
        assert_eq!(
            c[5],
            "inferbench kube collect --shard-count 4 --from ./bench --output-dir ./bench-merged"
        );
        // The overrides are one single-quoted JSON word naming the claim and the mount.
        let o = c[1].split_once("--overrides=").unwrap().1;
        assert!(o.starts_with('\'') && o.ends_with('\''));
        let v: serde_json::Value = serde_json::from_str(&o[1..o.len() - 1]).unwrap();
        assert_eq!(
            v["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "inferbench-results"
        );
        assert_eq!(
            v["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
            "/results"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
