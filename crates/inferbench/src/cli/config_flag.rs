//! `profile --config FILE.yaml` (`-f`): the file's flags first, then the command line's. As
//! in AIPerf, a flag given on the command line overrides the file: every flag of the file
//! whose argument (or an argument it conflicts with) the command line gives is dropped.

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::command_with_unbuilt;

/// AIPerf 0.13's one built-in scenario (`--scenario` without a config) and why it is refused.
pub const AGENTX_SCENARIO: &str = "inferencex-agentx-mvp";

fn scenario_without_config(name: &str) -> String {
    if name == AGENTX_SCENARIO {
        format!(
            "--scenario {AGENTX_SCENARIO}: not built. It runs AIPerf's agentic_replay timing (trajectories started at a random 25-75 % point with their in-flight subagents seeded, a one-turn warmup behind a barrier, FIFO recycling of finished traces, cache-bust markers per session tree, idle-gap caps), which inferbench does not reproduce; replay the traces with --custom-dataset-type weka_trace instead (docs/datasets.md, \"Agentic traces\")"
        )
    } else {
        format!(
            "--scenario {name:?}: only with --config (a run of its `sweep: {{type: scenarios}}`); AIPerf's only built-in scenario is {AGENTX_SCENARIO}"
        )
    }
}

/// With `--config` on `profile` or `inspect`: the matches and argv of the file's flags merged
/// under the command line's. Without it, both unchanged.
pub fn apply_config(m: ArgMatches, argv: Vec<String>) -> Result<(ArgMatches, Vec<String>), String> {
    let Some((name, sub)) = m.subcommand() else {
        return Ok((m, argv));
    };
    if !matches!(name, "profile" | "inspect") {
        return Ok((m, argv));
    }
    let Some(path) = sub.get_one::<String>("config").cloned() else {
        if let Some(name) = sub.get_one::<String>("scenario") {
            return Err(scenario_without_config(name));
        }
        if sub.get_flag("simulated") {
            return Err("--simulated: only with --config (without --url the simulated server is already used)".into());
        }
        return Ok((m, argv));
    };
    let mut opts = crate::aiperf_config::Options {
        scenario: sub.get_one::<String>("scenario").cloned(),
        simulated: sub.get_flag("simulated"),
        cli: true,
    };
    // A `scenarios` sweep without --scenario runs every scenario, as AIPerf does: the first
    // gives the flags checked here, and the names go to `profile` (scenario_cells).
    let mut every = Vec::new();
    if opts.scenario.is_none() && name == "profile" {
        every = crate::aiperf_config::scenario_names(std::path::Path::new(&path))?;
        opts.scenario = every.first().cloned();
        if every.len() > 1 && sub.get_many::<String>("variants").is_some() {
            return Err(format!(
                "{path}: --variant cannot be used with a scenarios sweep: the file's scenarios are the cells (or pick one with --scenario)"
            ));
        }
    }
    let mut from_file = crate::aiperf_config::profile_flags(std::path::Path::new(&path), &opts)?;
    if every.len() > 1 {
        let _ = ORIGINAL_ARGV.set(argv.clone());
        for n in &every {
            from_file.extend(["--config-scenario".into(), n.clone()]);
        }
    }
    let cmd = command_with_unbuilt();
    let prof = cmd
        .find_subcommand(name)
        .ok_or_else(|| format!("no {name} subcommand"))?;
    let given: Vec<String> = sub
        .ids()
        .filter(|id| sub.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.as_str().to_string())
        .collect();
    let kept = drop_overridden(prof, &from_file, &given)?;
    // argv[0], the subcommand, the file's flags, then the command line's own.
    let pos = argv
        .iter()
        .position(|s| s == name)
        .ok_or_else(|| format!("no {name} in the command line"))?;
    let mut merged: Vec<String> = argv[..=pos].to_vec();
    merged.extend(kept);
    merged.extend(argv[pos + 1..].iter().cloned());
    let m2 = command_with_unbuilt()
        .try_get_matches_from(&merged)
        .map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default().to_string();
            format!(
                "{path}: the file's flags with the command line's: {}",
                first.trim_start_matches("error: ")
            )
        })?;
    Ok((m2, merged))
}

/// The command line as typed (before `--config`'s flags were merged in), kept when the
/// config's scenarios become cells: each cell merges the file again with its `--scenario`.
static ORIGINAL_ARGV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The cells of a config's scenarios (`--config-scenario`, none otherwise): each the command
/// line with `--scenario NAME`, merged with the file again, as `profile -f FILE --scenario
/// NAME` would run it; its directory is the scenario's name.
pub fn scenario_cells(a: &super::ProfileArgs) -> Result<Vec<super::VariantCell>, String> {
    let names = &a.aiperf.config_scenarios;
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let original = ORIGINAL_ARGV
        .get()
        .ok_or("--config-scenario: written by --config's mapping, not given by hand")?;
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let mut argv = original.clone();
        argv.extend(["--scenario".into(), n.clone()]);
        let m = command_with_unbuilt()
            .try_get_matches_from(&argv)
            .map_err(|e| {
                format!(
                    "scenario {n}: {}",
                    e.render().to_string().lines().next().unwrap_or_default()
                )
            })?;
        let (m, merged) = apply_config(m, argv)?;
        super::check_unbuilt(&m).map_err(|e| format!("scenario {n}: {e}"))?;
        let warnings = super::check_given(&m).map_err(|e| format!("scenario {n}: {e}"))?;
        let parsed = <super::Cli as clap::FromArgMatches>::from_arg_matches(&m)
            .map_err(|e| format!("scenario {n}: {e}"))?;
        let super::Command::Profile(args) = parsed.command else {
            return Err("scenarios: only with profile".into());
        };
        out.push(super::VariantCell {
            name: n.clone(),
            dir_name: super::variants::dir_segment(n, i),
            args: *args,
            warnings,
            argv: Some(merged),
        });
    }
    Ok(out)
}

/// The file's flags (`--long [VALUE]` tokens) without those the command line gives.
fn drop_overridden(
    cmd: &clap::Command,
    from_file: &[String],
    given: &[String],
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < from_file.len() {
        let tok = &from_file[i];
        let long = tok
            .strip_prefix("--")
            .ok_or_else(|| format!("config flag \"{tok}\" is not a --flag"))?;
        let arg = cmd
            .get_arguments()
            .find(|a| {
                a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|v| v.contains(&long))
            })
            .ok_or_else(|| format!("config flag --{long}: not a profile flag"))?;
        let takes = arg.get_action().takes_values();
        let n = if takes { 2 } else { 1 };
        let id = arg.get_id().as_str();
        let overridden = given.iter().any(|g| g == id)
            || cmd
                .get_arg_conflicts_with(arg)
                .iter()
                .any(|c| given.iter().any(|g| g == c.get_id().as_str()))
            // `conflicts_with` is declared on one side only (--streaming): look both ways.
            || cmd.get_arguments().any(|o| {
                given.iter().any(|g| g == o.get_id().as_str())
                    && cmd
                        .get_arg_conflicts_with(o)
                        .iter()
                        .any(|c| c.get_id() == arg.get_id())
            });
        if !overridden {
            out.extend(from_file[i..(i + n).min(from_file.len())].iter().cloned());
        }
        i += n;
    }
    Ok(out)
}

/// Notes for AIPerf's service flags that have no meaning in one process, and the refusal of
/// `--tokenizer-trust-remote-code` (it asks to run a tokenizer's own code, which inferbench
/// never does).
pub fn service_notes(m: &ArgMatches) -> Result<Vec<String>, String> {
    let Some((name, sub)) = m
        .subcommand()
        .filter(|(n, _)| matches!(*n, "profile" | "inspect"))
    else {
        return Ok(Vec::new());
    };
    if sub.get_flag("tokenizer_trust_remote_code") {
        return Err("--tokenizer-trust-remote-code: refused: it runs a tokenizer's own Python code, and inferbench runs no code; its tokenizers read tokenizer.json only".into());
    }
    let mut notes = super::service_args::notes(sub)?;
    if name == "inspect" {
        notes.extend(super::service_args::inspect_notes(sub));
    }
    if let Some(n) = sub.get_one::<u64>("record_processors") {
        notes.push(format!(
            "--record-processor-service-count {n}: no effect: inferbench folds every record in its one process (AIPerf's record-processor services do not exist here)"
        ));
    }
    Ok(notes)
}
