#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) on the stable toolchain and runs each
# for FUZZ_SECONDS (default 30), starting from its seeds in
# fuzz/corpus/<target>/. Installs cargo-fuzz once, pinned, as setup.sh
# installs trunk. A crash leaves its input in fuzz/artifacts/<target>/
# and fails the script; add that input to fuzz/corpus/<target>/ with the
# fix (tests/corpus.rs of eevdf-scenario replays it in cargo test).
#   scripts/fuzz.sh                        every target, 30 s each
#   FUZZ_SECONDS=180 scripts/fuzz.sh rtapp ftrace
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'fuzz: %s\n' "$*"; }

if ! (command -v cargo-fuzz >/dev/null 2>&1 \
  && cargo fuzz --version | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"); then
  say "building cargo-fuzz $CARGO_FUZZ_VERSION (a few minutes, once)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi

# No sanitizer: stable rustc has no -Zsanitizer, and the crates forbid
# unsafe code, so libFuzzer's coverage guidance is what matters. Debug
# assertions on: an arithmetic overflow must crash here, as in a debug
# build, not wrap as in release.
flags=(--sanitizer none --debug-assertions)
cargo +stable fuzz build "${flags[@]}"

for t in "${targets[@]}"; do
  # New inputs go to a scratch corpus, not into the repository's seeds.
  work="fuzz/target/corpus/$t"
  mkdir -p "$work"
  say "$t for ${FUZZ_SECONDS}s"
  cargo +stable fuzz run "${flags[@]}" "$t" "$work" "fuzz/corpus/$t" -- \
    -max_total_time="$FUZZ_SECONDS" -print_final_stats=1
done
say "no crash in ${#targets[@]} targets"
