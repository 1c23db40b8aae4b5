#!/usr/bin/env bash
# Loads `inferbench report --html` headless in Debian's Chromium (issue 15): the page loads
# with no console error and its inline script ran (the `data-report-ready` marker is in the
# dumped DOM), and a screenshot is not blank (more than a few distinct pixel values, the PNG
# decoded with python3's stdlib). Needs target/debug/inferbench (CI has built it by then).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bin=target/debug/inferbench
if [ ! -x "$bin" ]; then
  echo "report.sh: $bin is missing: build it first (cargo build -p inferbench)"
  exit 1
fi
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "report.sh: chromium is not installed and this is not root: apt-get install chromium"
    exit 1
  fi
fi
work=target/report-check
rm -rf "$work"
mkdir -p "$work"
"$bin" profile --streaming --request-count 40 --concurrency 4 --isl 32 --osl 8 --ui none \
  --sim-ttft-ms 5 --sim-itl-ms 1 --server-metrics-interval 0.02 --gpu-telemetry-interval 0.02 \
  --artifact-dir "$work/run" >/dev/null 2>"$work/profile.err" || { cat "$work/profile.err"; exit 1; }
"$bin" report "$work/run" --html "$work/report.html"
page="file://$(pwd)/$work/report.html"
chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
  --disable-extensions --enable-logging=stderr --v=0)
timeout 120 "${chrome[@]}" --dump-dom "$page" >"$work/dom.html" 2>"$work/dom.err"
timeout 120 "${chrome[@]}" --window-size=1280,2000 --screenshot="$work/shot.png" "$page" \
  >/dev/null 2>"$work/shot.err"
status=0
if grep -E 'CONSOLE|Uncaught' "$work/dom.err" "$work/shot.err"; then
  echo "report.sh: the page logged console messages (above)"
  status=1
fi
if ! grep -q 'data-report-ready="1"' "$work/dom.html"; then
  echo "report.sh: the page's inline script did not run (no data-report-ready marker)"
  status=1
fi
python3 - "$work/shot.png" <<'PY' || status=1
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h, ctype = 8, b"", 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    chunk = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
        assert depth == 8, f"bit depth {depth}"
    elif kind == b"IDAT":
        idat += chunk
    pos += 12 + n
bpp = {2: 3, 6: 4, 0: 1, 4: 2}[ctype]
raw, stride = zlib.decompress(idat), w * bpp
prev, colors, i = bytearray(stride), set(), 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    colors.update(bytes(line[k:k + bpp]) for k in range(0, stride, bpp * 7))
    prev = line
print(f"report.sh: screenshot {w}x{h}, {len(colors)} distinct pixel values (sampled)")
if len(colors) <= 8:
    sys.exit("report.sh: the screenshot is blank")
PY
# The `analyze` pages of a run with a raw export: the swim-lane viewer (a static SVG) and the
# turn-messages page (collapsible turns, filled by its script when opened) load with no
# console error, and hold what they draw.
"$bin" profile --streaming --request-count 20 --concurrency 4 --isl 32 --osl 8 --ui none \
  --sim-ttft-ms 5 --sim-itl-ms 1 --export-level raw --artifact-dir "$work/raw" >/dev/null \
  2>"$work/raw.err" || { cat "$work/raw.err"; exit 1; }
"$bin" analyze swim-lane "$work/raw" --html >/dev/null
"$bin" analyze turn-messages "$work/raw" >/dev/null
for page in swim_lane:'<svg' turn_messages:'<details class="turn"'; do
  name=${page%%:*}
  marker=${page#*:}
  timeout 120 "${chrome[@]}" --dump-dom "file://$(pwd)/$work/raw/$name.html" \
    >"$work/$name.dom" 2>"$work/$name.err"
  if grep -E 'CONSOLE|Uncaught' "$work/$name.err"; then
    echo "report.sh: $name.html logged console messages (above)"
    status=1
  fi
  if ! grep -q "$marker" "$work/$name.dom"; then
    echo "report.sh: $name.html has no $marker in its DOM"
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "report.sh: FAILED"
  exit 1
fi
echo "report.sh: the report and the analyze pages load headless with no console error and render ($(( $(date +%s) - start )) s)"
