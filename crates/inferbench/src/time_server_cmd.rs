//! `inferbench time-server`: the time reference shards measure their clock offsets against
//! (`profile --time-reference HOST:PORT`, docs/scale-out.md).

use std::io::Write;

use inferbench_run::Failure;
use inferbench_run::shard::clock::TimeServer;

use crate::cli::TimeServerArgs;

pub fn run(a: &TimeServerArgs) -> Result<u8, Failure> {
    let server = TimeServer::bind(&a.listen).map_err(Failure::input)?;
    // The address on stdout, first and alone, so that a launcher (or a test) can read it.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", server.addr());
    let _ = out.flush();
    eprintln!(
        "inferbench: time server answering on udp {} (Ctrl-C stops it)",
        server.addr()
    );
    server.wait();
    Ok(0)
}
