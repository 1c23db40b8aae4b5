//! AIPerf flags known by name but not run: using one is a clear error, not a no-op, and not
//! clap's generic "unexpected argument".

use clap::ArgAction;

use super::Cli;

/// AIPerf `profile` flags that inferbench accepts by name but has not built yet. Using one
/// is an error that says so, never a silent no-op. (name, takes a value)
pub const UNBUILT_FLAGS: &[(&str, bool)] = &[];

/// Why AIPerf's adaptive search is refused.
const SEARCH: &str = "AIPerf's adaptive search (its Bayesian, Optuna and SLA planners, which choose each next cell from the results so far, and their search files) is not built in inferbench; sweep a comma list (--concurrency 1,2,4,8) or --variant cells and read sweep_aggregate/";

/// Why the search recipes' own flags are refused.
const RECIPE: &str = "an input of AIPerf's --search-recipe recipes, which are not built in inferbench (they drive the adaptive search); sweep a comma list and judge it with --goodput or `inferbench gate`";

/// Why the accuracy flags are refused.
const ACCURACY: &str = "AIPerf's accuracy benchmarks (MMLU, AIME, GSM8K, … with their prompts and graders) are not built in inferbench; a dataset's expected answers are scored by inferbench's own correctness check (docs/correctness.md)";

/// AIPerf 0.13 `profile` flags refused for good, each with its reason: (name, takes a
/// value, why). docs/compatibility.md lists them.
pub const REFUSED_FLAGS: &[(&str, bool, &str)] = &[
    ("search-space", true, SEARCH),
    ("search-metric", true, SEARCH),
    ("search-stat", true, SEARCH),
    ("search-direction", true, SEARCH),
    ("search-max-iterations", true, SEARCH),
    ("search-initial-points", true, SEARCH),
    ("search-random-seed", true, SEARCH),
    ("search-planner", true, SEARCH),
    ("optuna-sampler", true, SEARCH),
    ("optuna-acquisition", true, SEARCH),
    ("optuna-terminator", true, SEARCH),
    ("search-percentile-pooling", true, SEARCH),
    ("bo-constraint-mode", true, SEARCH),
    ("search-sla", true, SEARCH),
    ("search-sla-tier", true, SEARCH),
    ("search-recipe", true, SEARCH),
    ("ttft-sla-ms", true, RECIPE),
    ("itl-sla-ms", true, RECIPE),
    ("tpot-sla-ms", true, RECIPE),
    ("e2e-sla-ms", true, RECIPE),
    ("error-rate-sla", true, RECIPE),
    ("slo-attainment-fraction", true, RECIPE),
    ("search-style", true, RECIPE),
    ("isl-osl-pairs", true, RECIPE),
    ("degradation-threshold", true, RECIPE),
    ("degradation-metric-tag", true, RECIPE),
    ("degradation-stat", true, RECIPE),
    ("isl-min", true, RECIPE),
    ("isl-max", true, RECIPE),
    ("isl-steps", true, RECIPE),
    ("concurrency-min", true, RECIPE),
    ("concurrency-max", true, RECIPE),
    ("concurrency-steps", true, RECIPE),
    ("osl-min", true, RECIPE),
    ("osl-max", true, RECIPE),
    ("osl-steps", true, RECIPE),
    ("accuracy-benchmark", true, ACCURACY),
    ("accuracy-tasks", true, ACCURACY),
    ("accuracy-n-shots", true, ACCURACY),
    ("accuracy-enable-cot", false, ACCURACY),
    ("accuracy-grader", true, ACCURACY),
    ("accuracy-system-prompt", true, ACCURACY),
    ("accuracy-verbose", false, ACCURACY),
];

/// Add the unbuilt and refused flags to the `profile` and `inspect` subcommands, hidden, so
/// that clap accepts them and [`check_unbuilt`] can name them in a clear error.
pub fn command_with_unbuilt() -> clap::Command {
    use clap::CommandFactory;
    let add = |mut c: clap::Command| {
        let all = UNBUILT_FLAGS
            .iter()
            .copied()
            .chain(REFUSED_FLAGS.iter().map(|(n, v, _)| (*n, *v)));
        for (name, takes_value) in all {
            // The id is the kebab-case long name: derived ids are snake_case field names, so
            // the two never collide.
            let mut a = clap::Arg::new(name).long(name).hide(true);
            a = if takes_value {
                a.num_args(0..).action(ArgAction::Append)
            } else {
                a.num_args(0..=1).action(ArgAction::Append)
            };
            c = c.arg(a);
        }
        c
    };
    Cli::command()
        .mut_subcommand("profile", add)
        .mut_subcommand("inspect", add)
}

/// One line naming every unbuilt or refused flag used, with the reasons.
pub fn check_unbuilt(m: &clap::ArgMatches) -> Result<(), String> {
    let sub = match m.subcommand() {
        Some(("profile" | "inspect", sub)) => sub,
        _ => return Ok(()),
    };
    let used: Vec<String> = UNBUILT_FLAGS
        .iter()
        .filter(|(n, _)| sub.contains_id(n))
        .map(|(n, _)| format!("--{n}"))
        .collect();
    if !used.is_empty() {
        return Err(format!(
            "{} {} an AIPerf flag that inferbench does not implement yet; remove it (see docs/compatibility.md)",
            used.join(", "),
            if used.len() == 1 { "is" } else { "are" }
        ));
    }
    // Grouped by reason, in the list's order.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (n, _, why) in REFUSED_FLAGS.iter().filter(|(n, _, _)| sub.contains_id(n)) {
        match groups.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(format!("--{n}")),
            None => groups.push((why, vec![format!("--{n}")])),
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    Err(groups
        .iter()
        .map(|(why, names)| format!("{}: refused: {why}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str]) -> Result<(), String> {
        let mut v = vec!["inferbench"];
        v.extend(args);
        let m = command_with_unbuilt().try_get_matches_from(v).unwrap();
        check_unbuilt(&m)
    }

    #[test]
    fn every_refused_flag_is_known_and_refused_with_its_reason() {
        command_with_unbuilt().debug_assert();
        for (name, takes, why) in REFUSED_FLAGS {
            let flag = format!("--{name}");
            let mut args = vec!["profile", flag.as_str()];
            if *takes {
                args.push("x");
            }
            let e = check(&args).unwrap_err();
            assert_eq!(e, format!("--{name}: refused: {why}"));
            assert!(!e.contains('\n'));
        }
        // A bare boolean flag, and one with a value, are both known.
        assert!(check(&["profile", "--accuracy-verbose"]).is_err());
        assert!(check(&["inspect", "--accuracy-verbose", "true"]).is_err());
        assert_eq!(check(&["profile"]), Ok(()));
    }

    #[test]
    fn several_refused_flags_are_named_together_by_reason() {
        let e = check(&[
            "profile",
            "--search-space",
            "concurrency:1:64",
            "--accuracy-benchmark",
            "mmlu",
            "--search-metric",
            "request_throughput",
        ])
        .unwrap_err();
        assert_eq!(
            e,
            format!(
                "--search-space, --search-metric: refused: {SEARCH}; --accuracy-benchmark: refused: {ACCURACY}"
            )
        );
    }
}
