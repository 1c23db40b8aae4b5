//! `inferbench config validate | expand FILE.yaml` (AIPerf's YAML configs, not run) and
//! `config init` (inferbench's starter configs).

use std::path::Path;

use inferbench_run::Failure;

use crate::cli::ConfigCommand;

pub fn run(a: &crate::cli::ConfigArgs) -> Result<u8, Failure> {
    match &a.command {
        ConfigCommand::Validate { file } => {
            let path = Path::new(file);
            // Reading the cells validates the file; every cell is then mapped, so that a part
            // refused in one is named.
            let cells = crate::aiperf_config::expand_file(path, false).map_err(Failure::input)?;
            println!("{file}: valid against AIPerf 0.13's schema");
            let mut refused: Vec<String> = cells
                .iter()
                .filter_map(|(_, f)| f.as_ref().err().cloned().or_else(|| parses(f).err()))
                .collect();
            // Each cell of a grid or zip maps; `profile` must also run them together (through
            // its comma-list flags, with the sweep's own keys).
            if refused.is_empty() && cells.iter().any(|(c, _)| !c.doc.is_empty()) {
                let opts = crate::aiperf_config::Options {
                    scenario: None,
                    simulated: false,
                    cli: true,
                };
                let whole = crate::aiperf_config::profile_flags(path, &opts);
                if let Some(e) = whole
                    .as_ref()
                    .err()
                    .cloned()
                    .or_else(|| parses(&whole).err())
                {
                    refused.push(e);
                }
            }
            // What `profile` does around the runs (user files, plot specifications) is
            // checked as `profile` checks it before any request.
            if refused.is_empty() {
                let opts = crate::aiperf_config::Options {
                    scenario: crate::aiperf_config::scenario_names(path)
                        .ok()
                        .and_then(|n| n.first().cloned()),
                    simulated: false,
                    cli: true,
                };
                if let Err(e) = crate::aiperf_config::RunHooks::from_config(path, &opts) {
                    refused.push(e);
                }
            }
            match refused.first() {
                None => {
                    println!(
                        "{file}: inferbench runs it ({} cell{})",
                        cells.len(),
                        if cells.len() == 1 { "" } else { "s" }
                    );
                    if let Some(name) = cells.iter().find_map(|(_, f)| public_dataset(f)) {
                        println!(
                            "{file}: note: --public-dataset {name} is read from a local file: give it with --public-dataset-path FILE (inferbench does not download datasets)"
                        );
                    }
                }
                Some(e) => println!("{file}: inferbench refuses it: {e}"),
            }
            Ok(0)
        }
        ConfigCommand::Init(i) => init(i),
        ConfigCommand::Expand { file, simulated } => {
            let cells = crate::aiperf_config::expand_file(Path::new(file), *simulated)
                .map_err(Failure::input)?;
            println!(
                "{file}: {} cell{}",
                cells.len(),
                if cells.len() == 1 { "" } else { "s" }
            );
            for (i, (c, flags)) in cells.iter().enumerate() {
                println!("cell {}: {}", i + 1, c.name);
                match flags.as_ref().map(|f| (f, parses(flags))) {
                    Ok((f, Ok(()))) => println!("  flags: {}", shown(f)),
                    Ok((f, Err(e))) => {
                        println!("  flags: {}", shown(f));
                        println!("  refused: {e}");
                    }
                    Err(e) => println!("  refused: {e}"),
                }
            }
            Ok(0)
        }
    }
}

/// `config init`: list, search, or write a template (AIPerf's interface).
fn init(i: &crate::cli::ConfigInitArgs) -> Result<u8, Failure> {
    use crate::aiperf_config::init;
    const CMD: &str = "inferbench config init";
    if i.list {
        let found = init::list(i.category.as_deref());
        if found.is_empty() {
            println!(
                "No templates in category '{}'.",
                i.category.as_deref().unwrap_or_default()
            );
            return Ok(0);
        }
        print!("{}", init::table(&found, i.verbose));
        println!("Use '{CMD} --template <name>' to generate a template.");
        return Ok(0);
    }
    if let Some(q) = &i.search {
        let found = init::search(q);
        if found.is_empty() {
            println!("No templates match '{q}'.");
            println!("Run '{CMD} --list' to see all templates.");
        } else {
            print!("{}", init::table(&found, i.verbose));
        }
        return Ok(0);
    }
    let Some(name) = &i.template else {
        return Err(Failure::input(format!(
            "config init: give --template NAME, or run '{CMD} --list' to see what is available"
        )));
    };
    let text = init::render(name, i.model.as_deref(), i.url.as_deref())
        .map_err(|e| Failure::input(format!("config init --template: {e}")))?;
    match &i.output {
        None => print!("{text}"),
        Some(out) => {
            if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    Failure::input(format!("config init --output {}: {e}", out.display()))
                })?;
            }
            std::fs::write(out, &text).map_err(|e| {
                Failure::input(format!("config init --output {}: {e}", out.display()))
            })?;
            println!("Wrote {name} template to {}", out.display());
        }
    }
    Ok(0)
}

/// The `--public-dataset` a cell's flags name.
fn public_dataset(flags: &Result<Vec<String>, String>) -> Option<String> {
    let f = flags.as_ref().ok()?;
    let i = f.iter().position(|x| x == "--public-dataset")?;
    f.get(i + 1).cloned()
}

/// Whether `profile` accepts the mapped flags (an unbuilt flag such as `--slice-duration`
/// is refused here, as the run would refuse it).
fn parses(flags: &Result<Vec<String>, String>) -> Result<(), String> {
    use clap::FromArgMatches;
    let Ok(flags) = flags else { return Ok(()) };
    let mut argv: Vec<String> = vec!["inferbench".into(), "profile".into()];
    argv.extend(flags.iter().cloned());
    let m = crate::cli::command_with_unbuilt()
        .try_get_matches_from(&argv)
        .map_err(|e| {
            let text = e.render().to_string();
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string()
        })?;
    crate::cli::check_unbuilt(&m)?;
    crate::cli::check_given(&m)?;
    match crate::cli::Cli::from_arg_matches(&m)
        .map_err(|e| e.to_string())?
        .command
    {
        crate::cli::Command::Profile(a) => crate::cli::cells(&a).map(|_| ()),
        _ => Ok(()),
    }
}

/// The flags as a shell line, secret values (`--api-key`, a sensitive header's value, URL
/// credentials) replaced: the printout is a log, and secrets never reach one.
fn shown(f: &[String]) -> String {
    crate::cli::redacted_command_line(f)
}
