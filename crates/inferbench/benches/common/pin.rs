//! Shared by the benchmarks: how the one-thread mock-server is started.

use std::process::{Command, Stdio};

/// A command running `bin`, pinned to the machine's last CPU with `taskset` when there is
/// more than one CPU and `taskset` exists (the client's threads then compete with the server
/// only there).
pub fn on_last_cpu(bin: &str) -> Command {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let has_taskset = Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_taskset && cpus > 1 {
        let mut c = Command::new("taskset");
        c.args(["-c", &(cpus - 1).to_string(), bin]);
        c
    } else {
        Command::new(bin)
    }
}
