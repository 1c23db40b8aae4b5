#!/usr/bin/env bash
# AIPerf 0.13.0's own `aiperf plot` reads inferbench run directories (issue 15): a single
# run (per-record export, timeslices) with every single-run plot AIPerf has, and a
# concurrency sweep with its multi-run defaults. Fails when a plot is not generated.
#
# Installs what it needs: aiperf==0.13.0 from PyPI into target/aiperf-venv, and Debian's
# chromium (kaleido renders AIPerf's PNGs through it) when running as root.
# Usage: bash .ci/aiperf-plot.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/debug/inferbench
[ -x "$BIN" ] || cargo build -p inferbench
VENV=target/aiperf-venv
if [ ! -x "$VENV/bin/aiperf" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q aiperf==0.13.0
fi
if ! command -v chromium >/dev/null && ! command -v google-chrome >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q && apt-get install -y -q chromium
  else
    echo "aiperf-plot: AIPerf's PNG export needs chromium (apt-get install chromium)" >&2
    exit 1
  fi
fi

W=target/aiperf-plot-check
rm -rf "$W" && mkdir -p "$W/home"
export HOME="$PWD/$W/home" # AIPerf writes ~/.aiperf/plot_config.yaml
common=(--streaming --isl 32 --osl 8 --ui none --sim-ttft-ms 5 --sim-itl-ms 2
  --export-level records --slice-duration 0.05)
"$BIN" profile "${common[@]}" --request-count 40 --concurrency 4 --artifact-dir "$W/single" \
  >"$W/single.log" 2>&1
"$BIN" profile "${common[@]}" --request-count 24 --concurrency 1,2,4 --artifact-dir "$W/sweep" \
  >"$W/sweep.log" 2>&1

# The first run writes AIPerf's default config; then every single-run plot is switched on.
check() { # DIR EXPECTED-COUNT [aiperf plot options]
  local dir=$1 want=$2
  shift 2
  timeout 600 "$VENV/bin/aiperf" plot "$dir" "$@" >"$dir.plot.log" 2>&1
  local got
  got=$(sed -n 's/^Generated \([0-9]*\) plots.*/\1/p' "$dir/plots/summary.txt")
  if grep -q "Failed to generate" "$dir/plots/aiperf_plot.log" || [ "${got:-0}" != "$want" ]; then
    echo "aiperf-plot: $dir: ${got:-0} of $want plots" >&2
    grep -A4 "Failed to generate" "$dir/plots/aiperf_plot.log" >&2 || true
    exit 1
  fi
  for f in "$dir"/plots/*.png; do
    [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || {
      echo "aiperf-plot: $f is not a PNG" >&2
      exit 1
    }
  done
  echo "aiperf-plot: $dir: $got plots: $(cd "$dir/plots" && ls -- *.png | tr '\n' ' ')"
}
check "$W/sweep" 4
sed -e '/single_run_defaults:/,/^  # ===/s/^    # - /    - /' "$HOME/.aiperf/plot_config.yaml" \
  >"$W/all_single_plots.yaml"
check "$W/single" 10 --config "$W/all_single_plots.yaml"
echo "aiperf-plot: ok"
