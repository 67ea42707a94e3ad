#!/usr/bin/env bash
# Installs everything the project needs, idempotently and pinned. A warm
# run (everything present) takes seconds. Safe to run again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14 # 0.22.x needs rustc >= 1.96.1; the machine has 1.95
# wasm-bindgen-cli must equal the lock file's wasm-bindgen exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
# Tools are built without LTO: about twice as fast on 2 cores.
export CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

say() { printf 'setup: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo

rustup target list --installed | grep -qx wasm32-unknown-unknown \
  || { say "adding wasm32-unknown-unknown"; rustup target add wasm32-unknown-unknown; }

# `setup.sh --kernel` (make test) adds what real-kernel mode needs:
# QEMU, and dpkg-deb/apt for `eevdf kernel fetch` (in the base image).
pkgs=(chromium chromium-driver parallel)
[ "${1:-}" = "--kernel" ] && pkgs+=(qemu-system-x86)
need=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "apt: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

if ! (have trunk && trunk --version | grep -qx "trunk $TRUNK_VERSION"); then
  say "building trunk $TRUNK_VERSION (several minutes, once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if ! (have wasm-bindgen && wasm-bindgen --version | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"); then
  say "building wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes, once)"
  # The registry mirror lacks one locked dependency of the CLI; fall back
  # to a fresh resolution when --locked fails.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked --force \
    || cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# npm dev tools from the lock file: binaryen (wasm-opt 132), playwright-core,
# axe-core (the e2e accessibility audit).
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || [ ! -d node_modules/axe-core ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund
fi

# Trunk runs cargo --offline (Trunk.toml offline = true).
cargo fetch --locked >/dev/null
say "ready (trunk $(trunk --version | cut -d' ' -f2), wasm-bindgen $WASM_BINDGEN_VERSION, $(wasm-opt --version | cut -d' ' -f3))"
