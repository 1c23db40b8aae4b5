//! Shared by the benchmarks: where the one-thread mock-server and the client run. The
//! server is pinned to the machine's last CPU and the client to the others, so that neither
//! takes the other's core: left to the scheduler, the client's threads sometimes land on the
//! server's core, and the two then take turns on it (the server's rate falls and the client
//! reads fewer, larger batches), which made runs of the same build differ by regime rather
//! than by noise.

use std::process::{Command, Stdio};

fn cpus_and_taskset() -> Option<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let has_taskset = Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (has_taskset && cpus > 1).then_some(cpus)
}

/// A command running `bin`, pinned to the machine's last CPU with `taskset` when there is
/// more than one CPU and `taskset` exists.
pub fn on_last_cpu(bin: &str) -> Command {
    match cpus_and_taskset() {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &(cpus - 1).to_string(), bin]);
            c
        }
        None => Command::new(bin),
    }
}

/// A command running `bin` on every CPU but the last (the server's), when `on_last_cpu`
/// pins the server.
#[allow(dead_code)] // not every benchmark starts a client process
pub fn off_last_cpu(bin: &str) -> Command {
    match cpus_and_taskset() {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &format!("0-{}", cpus - 2), bin]);
            c
        }
        None => Command::new(bin),
    }
}

/// Runs `f` on a thread of its own kept off the last CPU (the server's), as `off_last_cpu`
/// does for a process (a thread, so that the processes this one starts later keep the
/// whole machine: a child inherits its parent thread's affinity).
pub fn off_last_cpu_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            // Only where `on_last_cpu` pins the server: otherwise it has no core of its own.
            if let Some(cpus) = cpus_and_taskset() {
                // SAFETY: a zeroed cpu_set_t filled with CPU_SET, passed with its own size,
                // for this thread alone.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    for c in 0..cpus - 1 {
                        libc::CPU_SET(c, &mut set);
                    }
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
            }
            f()
        })
        .join()
        .expect("the pinned thread panicked")
    })
}
