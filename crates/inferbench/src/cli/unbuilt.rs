//! AIPerf flags accepted by name but not built: using one is a clear error, not a no-op.

use clap::ArgAction;

use super::Cli;

/// AIPerf `profile` flags that inferbench accepts by name but has not built yet. Using one
/// is an error that says so, never a silent no-op. (name, takes a value)
pub const UNBUILT_FLAGS: &[(&str, bool)] = &[
    ("num-warmup-sessions", true),
    ("variant", true),
    ("sweep-variant", true),
    ("no-sweep-table", false),
];

/// Add the unbuilt flags to the `profile` subcommand, hidden, so that clap accepts them and
/// [`check_unbuilt`] can name them in a clear error.
pub fn command_with_unbuilt() -> clap::Command {
    use clap::CommandFactory;
    let add = |mut c: clap::Command| {
        for (name, takes_value) in UNBUILT_FLAGS {
            // The id is the kebab-case long name: derived ids are snake_case field names, so
            // the two never collide.
            let mut a = clap::Arg::new(*name).long(*name).hide(true);
            a = if *takes_value {
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
    if used.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} {} an AIPerf flag that inferbench does not implement yet; remove it (see docs/compatibility.md)",
        used.join(", "),
        if used.len() == 1 { "is" } else { "are" }
    ))
}
