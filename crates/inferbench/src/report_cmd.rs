//! `inferbench report DIR... --html OUT.html`: the flags → `inferbench_report::html::build`
//! → the file (docs/reports.md).

use inferbench_report::html::{ReportSpec, build};
use inferbench_run::Failure;

use crate::cli::ReportArgs;

pub fn run(a: &ReportArgs) -> Result<u8, Failure> {
    let page = build(&ReportSpec {
        dirs: a.dirs.clone(),
        gate: a.gate.clone(),
        tokenizer: a.tokenizer.clone(),
    })?;
    let out = &a.html;
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| Failure::input(format!("--html {}: not a file name", out.display())))?
        .to_string_lossy()
        .into_owned();
    let fail = |e: inferbench_artifacts::ArtifactError| {
        Failure::input(format!("--html {}: {e}", out.display()))
    };
    let mut f = inferbench_artifacts::AtomicFile::create(&dir, &name).map_err(fail)?;
    f.write_all(page.as_bytes()).map_err(fail)?;
    f.commit().map_err(fail)?;
    eprintln!("inferbench: report written to {}", out.display());
    Ok(0)
}
