#!/usr/bin/env bash
# Proves a change leaves results alone: runs every preset on a set of
# machines and feature lines with the CLI built at BASE and with the
# work tree, and compares the `eevdf.result.v1` JSON byte for byte.
#   scripts/identical.sh BASE        e.g. HEAD, main, a commit
#   IDENTICAL_DURATION=300ms         simulated time per run
#   IDENTICAL_JOBS=2                 runs at once
#   IDENTICAL_ENGINE=any             compare with the engine version
#                                    masked: what an engine bump changes
#                                    beyond its version
# Exit 0 when every run is identical, 1 when one differs (listed), 2 on
# a usage or build error. An engine version bump changes every result.
set -euo pipefail
cd "$(dirname "$0")/.."

base=${1:-}
[ -n "$base" ] || { echo "usage: scripts/identical.sh BASE" >&2; exit 2; }
rev=$(git rev-parse --verify "$base^{commit}") || exit 2
duration=${IDENTICAL_DURATION:-300ms}
jobs=${IDENTICAL_JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/identical.XXXXXX")
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Machines: one CPU, flat SMP, SMT+NUMA, big.LITTLE, the kernel twin.
machines=(up smp4 xeon-4314-2s rb5 qemu-icount)
# Feature lines: the preset's own, and toggles that move most decisions.
features=("" "NO_RUN_TO_PARITY" "NO_PREEMPT_SHORT NEXT_BUDDY" "NO_DELAY_DEQUEUE")

say() { printf 'identical: %s\n' "$*" >&2; }
say "building $base (${rev:0:12}) and the work tree"
git worktree add --detach -q "$work/base" "$rev"
cargo build --release -q -p eevdf-cli --manifest-path "$work/base/Cargo.toml" \
  --target-dir "$work/target-base" || exit 2
cargo build --release -q -p eevdf-cli --target-dir "$work/target-head" || exit 2

presets=$("$work/target-head/release/eevdf" presets | awk '{print $1}')
runs="$work/runs"
for p in $presets; do
  for m in "${machines[@]}"; do
    for i in "${!features[@]}"; do
      printf '%s\t%s\t%s\n' "$p" "$m" "$i"
    done
  done
done >"$runs"
say "$(wc -l <"$runs") runs of $duration each, $jobs at a time"

one() {
  local p=$1 m=$2 i=$3 side out
  local f=${features[$i]}
  for side in base head; do
    out="$work/out/$side/$p.$m.$i.json"
    mkdir -p "$(dirname "$out")"
    local args=(run "$p" --set "machine=$m" --duration "$duration" --format json)
    [ -n "$f" ] && args+=(--features "$f")
    # A run the CLI refuses (exit 2) or stops (exit 1) compares too:
    # stderr and the exit code are part of the result.
    { "$work/target-$side/release/eevdf" "${args[@]}" 2>&1; echo "exit $?"; } >"$out" || true
  done
  if [ "${IDENTICAL_ENGINE:-}" = any ]; then
    for side in base head; do
      out="$work/out/$side/$p.$m.$i.json"
      sed -i -E 's/"engine":"[0-9.]+"/"engine":"X"/; s/engine [0-9.]+\\n/engine X\\n/' "$out"
    done
  fi
  if cmp -s "$work/out/base/$p.$m.$i.json" "$work/out/head/$p.$m.$i.json"; then
    echo "same"
  else
    echo "DIFFERS $p machine=$m features=${f:-preset}"
  fi
}
export -f one
export work duration
features_env=$(printf '%s\n' "${features[@]}")
export features_env
results=$(xargs -P "$jobs" -L 1 bash -c '
  mapfile -t features <<<"$features_env"
  one "$0" "$1" "$2"' <"$runs")
total=$(grep -c . <<<"$results")
same=$(grep -cx same <<<"$results" || true)
say "$same of $total runs identical to $base"
if [ "$same" != "$total" ]; then
  grep -v -x same <<<"$results" | sort
  exit 1
fi
