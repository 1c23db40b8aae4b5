//! `inferbench completions SHELL` and `inferbench man`: generated from the same clap
//! definitions that parse the flags, so they never drift from what the binary accepts.
//! AIPerf flags that are refused by name (`UNBUILT_FLAGS`, `REFUSED_FLAGS`) are not in either.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;
use inferbench_run::Failure;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

pub fn completions(a: &CompletionsArgs) -> Result<u8, Failure> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "inferbench", &mut out);
    out.flush()
        .map_err(|e| Failure::run(format!("writing the completions: {e}")))?;
    Ok(0)
}

pub fn man(a: &ManArgs) -> Result<u8, Failure> {
    let cmd = Cli::command();
    match &a.out_dir {
        // One page per command and subcommand: inferbench.1, inferbench-profile.1, …
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::input(format!("--out-dir {}: {e}", dir.display())))?;
            write_pages(&cmd, dir)?;
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut buf)
                .map_err(|e| Failure::run(format!("rendering the man page: {e}")))?;
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)
                .and_then(|_| out.flush())
                .map_err(|e| Failure::run(format!("writing the man page: {e}")))?;
        }
    }
    Ok(0)
}

fn write_pages(cmd: &clap::Command, dir: &Path) -> Result<(), Failure> {
    clap_mangen::generate_to(cmd.clone(), dir)
        .map_err(|e| Failure::run(format!("--out-dir {}: {e}", dir.display())))
}
