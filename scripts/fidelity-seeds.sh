#!/bin/sh
# Simulator-only fidelity report against the seed threads: runs every
# simulable comparison in tests/seeds/published.txt (A and B, seeds 1..9,
# medians) and writes docs/fidelity-seeds.md.
#   EEVDF_FIDELITY_SEEDS=N  seeds per side (default 9)
#   EEVDF_FIDELITY_JOBS=N   worker threads (default 2)
#   EEVDF_FIDELITY_OUT=PATH output file (default docs/fidelity-seeds.md)
set -eu
cd "$(dirname "$0")/.."
exec cargo test --release -p eevdf-scenario --test seeds_published -- \
    --ignored --nocapture fidelity_seeds_report
