# The project's task runner. The two commands a newcomer needs:
#   make serve   set up, then serve the playground on http://127.0.0.1:8080
#   make test    set up, then run every check CI runs
# Each step is also a target of its own (make help).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
# npm's wasm-opt must come before Debian's /usr/bin/wasm-opt.
export PATH := $(HOME)/.cargo/bin:$(CURDIR)/node_modules/.bin:$(PATH)
export TRUNK_SKIP_VERSION_CHECK := true
# Property tests replay the same cases in CI (seed + commit = same run);
# override to explore: make test-native PROPTEST_RNG_SEED=$$RANDOM
PROPTEST_RNG_SEED ?= 20261129
export PROPTEST_RNG_SEED

WASM_CRATES := eevdf-core eevdf-sim eevdf-scenario eevdf-driver eevdf-web

.PHONY: help setup setup-kernel guest test-kernel fidelity fidelity-doc default-ref throughput-ref steady-ref fidelity-seeds serve test fmt clippy test-native test-wasm check-wasm build-web e2e budgets bench-quick fuzz identical scenario-keys sweep-parallel sweep-slurm

help:
	@echo "make serve   set up and serve the playground on http://127.0.0.1:8080"
	@echo "make test    set up and run every test (what CI runs)"
	@echo "steps: setup fmt clippy test-native bench-quick check-wasm test-wasm build-web e2e"
	@echo "real kernel: setup-kernel guest test-kernel (boots Debian's newest 7.2 under QEMU)"
	@echo "fidelity: fidelity [ROWS=a,b VARIANTS=.. KERNELS=7.2,6.12] (hours), fidelity-doc, default-ref, throughput-ref, steady-ref"
	@echo "fuzz: fuzz [FUZZ_SECONDS=30] every parser on stable (CI smoke-runs it)"
	@echo "budgets: page/CLI wall time for every preset (after build-web)"
	@echo "refactors: identical BASE=rev (every preset's results byte for byte against rev)"
	@echo "docs: scenario-keys (docs/scenario-keys.md from the key tables)"
	@echo "sweeps: sweep-parallel (GNU parallel recipe, in test), sweep-slurm (one-node Slurm, optional)"

setup:
	@./scripts/setup.sh

setup-kernel:
	@./scripts/setup.sh --kernel

serve: setup
	trunk serve

test: setup-kernel fmt clippy test-native bench-quick check-wasm test-wasm build-web e2e sweep-parallel test-kernel
	@echo "all checks passed"

fmt:
	cargo fmt --all --check

clippy:
	cargo clippy --workspace --all-targets --locked -- -D warnings

test-native:
	cargo test --workspace --locked

# Benchmarks in their quick test mode only (each runs once).
bench-quick:
	cargo bench --locked -p eevdf-core --bench engine -- --test
	cargo bench --locked -p eevdf-sim --bench sim -- --test
	cargo bench --locked -p eevdf-driver --bench presets -- --test

# Nothing wasm-hostile may creep into the crates the web app uses.
check-wasm:
	cargo check --locked --target wasm32-unknown-unknown $(addprefix -p ,$(WASM_CRATES))

test-wasm:
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
	CHROMEDRIVER=/usr/bin/chromedriver \
	WASM_BINDGEN_TEST_WEBDRIVER_JSON=$(CURDIR)/tests/webdriver.json \
	WASM_BINDGEN_TEST_TIMEOUT=120 \
	cargo test --locked --target wasm32-unknown-unknown -p eevdf-web

build-web:
	trunk build --release

# The e2e checks compare the page with the native CLI (same p99 for a
# link, worker speed), so the release CLI is built first.
e2e:
	cargo build --release --locked -p eevdf-cli
	./tests/e2e/run.sh

# The README's GNU parallel recipe for sharded sweeps, run for real.
sweep-parallel:
	cargo build --release --locked -p eevdf-cli
	./tests/sweep-parallel.sh

# Optional, not in CI: the Slurm job-array recipe on a one-node Slurm
# (installs slurm-wlm and munge; daemons live for the test only).
sweep-slurm:
	cargo build --release --locked -p eevdf-cli
	./scripts/sweep-slurm.sh

# Page against CLI wall time for every preset (CI runs four).
budgets:
	cargo build --release --locked -p eevdf-cli
	BUDGETS=all E2E_ONLY=budgets ./tests/e2e/run.sh

# The static guest runner (eevdf kernel run builds it too, on demand).
guest:
	cargo run --release --locked -q -p eevdf-cli -- kernel guest

# Boots a real kernel: fetches Debian's newest 7.2.x, runs a short
# scenario twice and checks the two results are byte-identical; and
# checks that tests/kernel-ref/ was made with the guest built here.
test-kernel:
	cargo build --release --locked -p eevdf-cli
	cargo test --release --locked -p eevdf-cli --test kernel -- --ignored --nocapture

# The fidelity set on real kernels (hours of CPU; never part of make
# test): cached per boot, so an interrupted run resumes. ROWS, VARIANTS
# and KERNELS select part of it (eevdf kernel fidelity --list).
fidelity: setup-kernel
	cargo build --release --locked -p eevdf-cli
	./target/release/eevdf kernel fidelity $(if $(ROWS),--rows $(ROWS)) \
	  $(if $(VARIANTS),--variants $(VARIANTS)) $(if $(KERNELS),--kernels $(KERNELS))
	$(MAKE) fidelity-doc

# The default preset's flips on a real 7.2 kernel (about 10 min): the
# baseline and each flip, five seeds, kernel cells only
# (crates/eevdf-kernel/tests/default_flips.rs reads it).
default-ref: setup-kernel
	cargo build --release --locked -p eevdf-cli
	./target/release/eevdf sweep default --kernel 7.2 --jobs 1 --seeds 1..5 \
	  --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT,NO_RUN_TO_PARITY,NEXT_BUDDY \
	  > tests/kernel-ref/default.7.2.jsonl

# Throughput alone, both kernels (about 3.2 h on one core; 80 of the
# 280 boots are four-vCPU runs, 40 eight-vCPU ones, 40 of 64 vCPUs): on
# one CPU hackbench over pipes and sockets, and schbench, the default
# (WAKEUP_PREEMPTION, already on) and three flips; on four CPUs one and
# four hackbench groups, the default (NO_NEXT_BUDDY, already off) and
# NEXT_BUDDY; the same on two NUMA nodes of two SMT cores, one group
# on xeon-4314-2s and seven on graviton3, as processes and as threads
# (7.2 only); five seeds
# (crates/eevdf-kernel/tests/throughput.rs reads them).
THROUGHPUT_SWEEP = --kernel 7.2,6.12 --jobs 1 --seeds 1..5 \
  --features-axis WAKEUP_PREEMPTION,NEXT_BUDDY,NO_DELAY_DEQUEUE,NO_WAKEUP_PREEMPTION
throughput-ref: setup-kernel
	cargo build --release --locked -p eevdf-cli
	./target/release/eevdf sweep tests/kernel-ref/hackbench.txt $(THROUGHPUT_SWEEP) \
	  --vary task.hb.ipc=pipe,socket > tests/kernel-ref/hackbench.jsonl
	./target/release/eevdf sweep tests/kernel-ref/schbench.txt $(THROUGHPUT_SWEEP) \
	  > tests/kernel-ref/schbench.jsonl
	./target/release/eevdf sweep tests/kernel-ref/hackbench-smp4.txt \
	  --kernel 7.2,6.12 --jobs 1 --seeds 1..5 --features-axis NO_NEXT_BUDDY,NEXT_BUDDY \
	  --vary task.hb.groups=1,4 --vary task.hb.ipc=pipe,socket \
	  > tests/kernel-ref/hackbench-smp4.jsonl
	./target/release/eevdf sweep tests/kernel-ref/hackbench-numa2.txt \
	  --kernel 7.2 --jobs 1 --seeds 1..5 --features-axis NO_NEXT_BUDDY,NEXT_BUDDY \
	  --vary task.hb.groups=1,4 --vary task.hb.ipc=pipe,socket \
	  > tests/kernel-ref/hackbench-numa2.jsonl
	./target/release/eevdf sweep tests/kernel-ref/hackbench-xeon.txt \
	  --kernel 7.2 --jobs 1 --seeds 1..5 --features-axis NO_NEXT_BUDDY,NEXT_BUDDY \
	  --vary task.hb.ipc=pipe,socket > tests/kernel-ref/hackbench-xeon.jsonl
	./target/release/eevdf sweep tests/kernel-ref/hackbench-graviton3.txt \
	  --kernel 7.2 --jobs 1 --seeds 1..5 --features-axis NO_NEXT_BUDDY,NEXT_BUDDY \
	  --vary task.hb.mode=process,thread > tests/kernel-ref/hackbench-graviton3.jsonl

# What a running hackbench pays per message on each kernel (four
# one-CPU boots of 2 s, under a minute): the twins' `send` and `recv`
# are fitted to these runs (crates/eevdf-kernel/tests/steady.rs).
steady-ref: setup-kernel
	cargo build --release --locked -p eevdf-cli
	./target/release/eevdf sweep tests/kernel-ref/steady.txt --kernel 7.2,6.12 --jobs 1 \
	  --seeds 1 --vary task.hb.ipc=pipe,socket > tests/kernel-ref/steady.jsonl

# docs/fidelity.md, the known-disagreements list and the page's kernel
# rows, from the committed tests/kernel-ref/ (simulator only, seconds).
fidelity-doc:
	cargo run --release --locked -q -p eevdf-cli -- kernel fidelity-doc

# The seed threads as a second referee (simulator only, about 8 min on
# 2 cores): every transcribed comparison of tests/seeds/published.txt,
# written to docs/fidelity-seeds.md.
fidelity-seeds:
	./scripts/fidelity-seeds.sh

# docs/scenario-keys.md from the key tables (a unit test holds it
# current).
scenario-keys:
	UPDATE_SCENARIO_KEYS=1 cargo test -q -p eevdf-scenario --lib the_reference_is_current

# Every parser fuzzed on stable, FUZZ_SECONDS each (default 30); CI runs
# a short smoke after make test.
# Every preset on five machines and four feature lines, against BASE's
# build: a refactor must leave all of them byte-identical.
identical:
	@test -n "$(BASE)" || { echo "usage: make identical BASE=rev" >&2; exit 2; }
	./scripts/identical.sh $(BASE)

fuzz:
	./scripts/fuzz.sh
