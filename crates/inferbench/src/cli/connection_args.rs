//! `profile` flags: Connection reuse and the simulated server's faults (docs/faults.md), and their checks.

use clap::Args;
use inferbench_core::connection_plan::{ConnectionPlan, ReuseStrategy};

#[derive(Args, Debug, Clone, Default)]
pub struct ConnectionArgs {
    /// How connections are reused (AIPerf's flag): `pooled` (default: each concurrency slot
    /// keeps its connection across requests), `never` (a fresh connection per request, closed
    /// after it) or `sticky-user-sessions` (one connection per conversation, closed after its
    /// last turn). docs/faults.md.
    #[arg(long = "connection-reuse-strategy")]
    pub connection_reuse_strategy: Option<String>,
    /// A fault the built-in simulated server injects at a percentage of inference requests,
    /// `KIND=PERCENT`, repeatable (only without --url; as `mock-server --fault`; kinds in
    /// docs/faults.md). Default: none.
    #[arg(long = "sim-fault")]
    pub sim_fault: Vec<String>,
}

/// The simulated server's serving options with `--sim-fault` added (each one checked);
/// with --url (`simulated` false) any `--sim-fault` is an error.
pub fn with_sim_faults(
    a: &ConnectionArgs,
    mut serving: inferbench_core::plan::SimServing,
    simulated: bool,
) -> Result<inferbench_core::plan::SimServing, String> {
    if !simulated && !a.sim_fault.is_empty() {
        return Err("--sim-fault configures the built-in simulated server: not with --url".into());
    }
    for f in &a.sim_fault {
        inferbench_sim::parse_fault(f).map_err(|e| format!("--sim-fault {e}"))?;
        serving.faults.push(f.trim().to_string());
    }
    Ok(serving)
}

/// The plan these flags give (every value checked; an error names the flag).
pub fn connection_plan(a: &ConnectionArgs) -> Result<ConnectionPlan, String> {
    let reuse_strategy = match &a.connection_reuse_strategy {
        None => ReuseStrategy::Pooled,
        Some(s) => ReuseStrategy::parse(s).ok_or_else(|| {
            format!(
                "--connection-reuse-strategy {s:?}: expected pooled, never or sticky-user-sessions"
            )
        })?,
    };
    Ok(ConnectionPlan { reuse_strategy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_strategy_parses_aiperf_values_and_refuses_others() {
        let plan = |s: Option<&str>| {
            connection_plan(&ConnectionArgs {
                connection_reuse_strategy: s.map(str::to_string),
                ..Default::default()
            })
        };
        assert_eq!(plan(None).unwrap().reuse_strategy, ReuseStrategy::Pooled);
        assert_eq!(
            plan(Some("never")).unwrap().reuse_strategy,
            ReuseStrategy::Never
        );
        assert_eq!(
            plan(Some("sticky-user-sessions")).unwrap().reuse_strategy,
            ReuseStrategy::StickyUserSessions
        );
        let e = plan(Some("always")).unwrap_err();
        assert!(
            e.starts_with("--connection-reuse-strategy \"always\""),
            "{e}"
        );
    }

    #[test]
    fn sim_faults_are_checked_and_refused_with_a_url() {
        let a = ConnectionArgs {
            sim_fault: vec!["stall=5".into()],
            ..Default::default()
        };
        let s = with_sim_faults(&a, Default::default(), true).unwrap();
        assert_eq!(s.faults, vec!["stall=5".to_string()]);
        let e = with_sim_faults(&a, Default::default(), false).unwrap_err();
        assert!(e.contains("not with --url"), "{e}");
        let bad = ConnectionArgs {
            sim_fault: vec!["stall".into()],
            ..Default::default()
        };
        let e = with_sim_faults(&bad, Default::default(), true).unwrap_err();
        assert!(e.starts_with("--sim-fault \"stall\""), "{e}");
    }
}
