#!/usr/bin/env bash
# The README's GNU parallel recipe for `eevdf sweep --shard`, for real:
# N shards fanned out by parallel, merged, equal to the unsharded run
# byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
E=${EEVDF:-$PWD/target/release/eevdf}
N=4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args="sweep default --duration 1s --vary task.hog.slice=1ms,4ms,16ms --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT --seeds 1..4"
$E $args > "$dir/whole.jsonl"
seq 0 $((N - 1)) | parallel --will-cite "$E $args --shard {}/$N > $dir/shard{}.jsonl"
$E sweep merge "$dir"/shard*.jsonl > "$dir/merged.jsonl"
cmp "$dir/whole.jsonl" "$dir/merged.jsonl"
echo "sweep-parallel: $N shards via GNU parallel merge to the unsharded run ($(wc -l < "$dir/whole.jsonl") cells)"
