#!/usr/bin/env bash
# The bench guard: run before saying an issue that touches src/drain,
# src/pool, src/client, src/simulate or the sandbox is resolved, and quote
# its rows. It runs, in release, the default pool drain (50 of 1,000 nodes
# at 10), the large one (500 of 5,000 at 50) and `plan --simulate` of 50 of
# 5,000 nodes, reads the figures recorded in docs/benchmarks.md (its
# `bench-guard` lines, beside the current table) and exits 1 when a ratio to
# the lower bound, requests per pod, peak memory or the prediction's wall
# time is more than 5 % worse than recorded. Each bench runs three times
# and the guard takes each figure's median: one run of `plan --simulate`
# ranged 5.0-6.1 s on the same build (docs/benchmarks-history.md), so a
# single run failed the guard by chance.
#
# It is a benchmark, not a test: never part of .ci/run. A figure that got
# better is said too; record it by editing its `bench-guard` line together
# with the row of the current table it belongs to.
#
#   bash scripts/bench-guard.sh            # all three
#   bash scripts/bench-guard.sh pool-default   # one (pool-default, pool-large, simulate)
#   BENCH_GUARD_TOLERANCE=10 bash scripts/bench-guard.sh   # percent (default 5)
#   BENCH_GUARD_RUNS=5 bash scripts/bench-guard.sh         # runs a bench (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { echo "bench-guard: python3 is required" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-guard: GNU time (/usr/bin/time, Debian: time) is required" >&2; exit 2; }

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
only="${1:-}"
runs="${BENCH_GUARD_RUNS:-3}"
case "$runs" in
  '' | *[!0-9]* | 0) echo "bench-guard: BENCH_GUARD_RUNS must be a whole number of runs, 1 or more" >&2; exit 2 ;;
esac
run() {
  local name="$1"
  shift
  if [ -n "$only" ] && [ "$only" != "$name" ]; then
    return
  fi
  local i
  for i in $(seq "$runs"); do
    echo "bench-guard: $name, run $i of $runs: cargo bench $*" >&2
    cargo bench --quiet "$@" | tee "$out/$name.$i.txt"
  done
}
run pool-default --bench pool -- --roll 0 --only 0
run pool-large --bench pool -- --nodes 5000 --drained 500 --parallel 50 --roll 0 --only 0
run simulate --bench drain -- --simulate-timing 5000

python3 - "$out" docs/benchmarks.md "${BENCH_GUARD_TOLERANCE:-5}" <<'EOF'
import pathlib, re, sys

out, doc, tolerance = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), float(sys.argv[3])
# <!-- bench-guard NAME: FIGURE VALUE, FIGURE VALUE -->
recorded = {}
for m in re.finditer(r"<!-- bench-guard ([\w-]+): (.*?) -->", doc.read_text()):
    recorded[m.group(1)] = {k: float(v) for k, v in (p.split() for p in m.group(2).split(","))}

def pool(text):
    # The first row of kubectl maintain's drain in the pool bench's table.
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 14 and cells[2].startswith("kubectl maintain drain"):
            return {
                "ratio": float(cells[5]),
                "requests": float(cells[8]),
                "peak_mib": float(cells[11].split()[0]),
            }
    return None

def simulate(text):
    m = re.search(r"plan --simulate for .*?: ([\d.]+) s wall, peak (\d+) MiB", text)
    return m and {"wall_s": float(m.group(1)), "peak_mib": float(m.group(2))}

measured, ranges = {}, {}
for name, read in [("pool-default", pool), ("pool-large", pool), ("simulate", simulate)]:
    runs = sorted(out.glob(f"{name}.*.txt"))
    if not runs:
        continue
    each = [read(f.read_text()) for f in runs]
    if any(figures is None for figures in each):
        print(f"bench-guard: {name}: no figures in the output of a run", file=sys.stderr)
        sys.exit(1)
    # Each figure's median over the runs (the lower middle of an even count).
    measured[name] = {k: sorted(f[k] for f in each)[(len(each) - 1) // 2] for k in each[0]}
    ranges[name] = {k: (min(f[k] for f in each), max(f[k] for f in each)) for k in each[0]}

worse = []
print(f"\n| bench | figure | recorded | median now | runs' range | change | within {tolerance:g} % |")
print("|---|---|---|---|---|---|---|")
for name, figures in measured.items():
    base = recorded.get(name)
    if base is None:
        print(f"bench-guard: docs/benchmarks.md records no figures for {name}", file=sys.stderr)
        sys.exit(1)
    for figure, now in figures.items():
        was = base.get(figure)
        if was is None:
            continue
        change = (now - was) / was * 100 if was else 0.0
        ok = change <= tolerance
        if not ok:
            worse.append(f"{name} {figure}")
        low, high = ranges[name][figure]
        print(f"| {name} | {figure} | {was:g} | {now:g} | {low:g}-{high:g} | {change:+.1f} % | {'yes' if ok else '**no**'} |")
if worse:
    print(f"\nbench-guard: worse than recorded: {', '.join(worse)}", file=sys.stderr)
    sys.exit(1)
print("\nbench-guard: every figure within its bound")
EOF
