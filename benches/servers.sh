# Sourced by the A/B benchmark scripts: a work directory whose servers the exit trap stops,
# `start` for a mock-server, `PIN` (the last CPU) for a server that must not share the
# client's core, and `CLIENT_PIN` (every other CPU) for the client, which left to the
# scheduler sometimes lands on the server's core (crates/inferbench/benches/common/pin.rs).
WORK=$(mktemp -d)
# The servers start inside command substitutions (not jobs of this shell): their pids go to
# a file, and the exit trap stops them.
trap 'kill $(cat "$WORK"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

start() { # start LOG ARGS... : a mock-server; prints its URL
    local log=$1
    shift
    "$@" >/dev/null 2>"$log" &
    echo $! >"$log.pid"
    for _ in $(seq 100); do
        grep -q "listening on" "$log" 2>/dev/null && break
        sleep 0.1
    done
    grep -o 'http://[0-9.:]*' "$log" | head -1
}
PIN=()
CLIENT_PIN=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
    PIN=(taskset -c "$(($(nproc) - 1))")
    CLIENT_PIN=(taskset -c "0-$(($(nproc) - 2))")
fi
