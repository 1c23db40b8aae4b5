//! Every AIPerf 0.13 `profile` flag (tests/data/aiperf-0.13-profile-flags.txt) is known to
//! `inferbench profile`: built, accepted with a note, or refused by name (hidden). None gets
//! clap's generic "unexpected argument".

use clap::ArgAction;

use super::command_with_unbuilt;

/// The list, one flag per line, from docs of AIPerf 0.13 §1.1–§1.15.
const FLAGS: &str = include_str!("../../tests/data/aiperf-0.13-profile-flags.txt");

/// Flags named in the reference's §1 that belong to AIPerf's other subcommands (§1.16), not to
/// `profile`, so they are not in the list: (flag, why it is left out).
const EXCLUDED: &[(&str, &str)] = &[
    ("--theme", "`aiperf plot --theme light/dark`"),
    ("--dashboard", "`aiperf plot --dashboard`"),
    ("--host", "`aiperf plot --dashboard --host`"),
    ("--port", "`aiperf plot --dashboard --port`"),
    ("--mlflow-upload", "`aiperf plot --mlflow-upload`"),
    ("--quick", "`aiperf chat --quick`"),
    ("--no-history", "`aiperf chat --no-history`"),
    ("--max-isl", "`aiperf synthesize agentic-code --max-isl`"),
    ("--max-osl", "`aiperf synthesize agentic-code --max-osl`"),
    ("--seed", "`aiperf synthesize agentic-code --seed`"),
    ("--benchmark-run", "`aiperf service --benchmark-run`"),
    ("--type", "`aiperf service --type`"),
    ("--install-completion", "a top-level `aiperf` option"),
    ("--version", "a top-level `aiperf` option"),
    ("--block-size", "`aiperf analyze-trace --block-size`"),
    ("--output-file", "`aiperf analyze-trace --output-file`"),
    ("--list", "`aiperf config init --list`"),
    ("--search", "`aiperf config init --search`"),
    ("--category", "`aiperf config init --category`"),
    ("--validate", "`aiperf plugins --validate`"),
];

fn listed() -> Vec<&'static str> {
    FLAGS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// Whether `flag` (`--long`, `-s`, or `-vv`) is known to the profile command.
fn known(profile: &clap::Command, flag: &str) -> bool {
    if let Some(long) = flag.strip_prefix("--") {
        return profile.get_arguments().any(|a| {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|v| v.contains(&long))
        });
    }
    let short = flag.trim_start_matches('-');
    let mut chars = short.chars();
    let c = chars.next().unwrap();
    let arg = profile.get_arguments().find(|a| {
        a.get_short() == Some(c) || a.get_all_short_aliases().is_some_and(|v| v.contains(&c))
    });
    match arg {
        // `-vv` is `-v` twice: a counting flag.
        Some(a) if short.len() == 2 => {
            chars.next() == Some(c) && matches!(a.get_action(), ArgAction::Count)
        }
        Some(_) => short.len() == 1,
        None => false,
    }
}

#[test]
fn the_list_leaves_out_other_subcommands_flags() {
    let flags = listed();
    assert!(flags.len() > 250, "{} flags", flags.len());
    for (f, why) in EXCLUDED {
        assert!(!flags.contains(f), "{f} is listed but is {why}");
    }
}

#[test]
fn every_aiperf_profile_flag_is_known() {
    let cmd = command_with_unbuilt();
    let profile = cmd.find_subcommand("profile").unwrap();
    // The check itself tells known from unknown.
    assert!(!known(profile, "--no-such-flag"));
    assert!(!known(profile, "-x"));
    assert!(known(profile, "--prompt-input-tokens-mean") && known(profile, "-vv"));
    // The negations of AIPerf's default-true trace-replay switches, not in the list.
    assert!(known(profile, "--no-open-loop-replay") && known(profile, "--no-force-min-tokens"));
    let unknown: Vec<&str> = listed()
        .into_iter()
        .filter(|f| !known(profile, f))
        .collect();
    assert!(
        unknown.is_empty(),
        "unknown to `inferbench profile`: {}",
        unknown.join(" ")
    );
}
