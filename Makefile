# aitasks: every command a newcomer needs (CONTRIBUTING.md, "The commands", lists them). See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# Load .local/env (written by `make up`); variables already set in the environment win.
LOAD_ENV := source scripts/env.sh && load_local_env;
TOOLS = $(shell scripts/tools.sh)


.PHONY: warm help up down serve stats token demo bench simulate growth chaos load fuzz test check fmt lint deny audit sbom build unit local-model services template-lint lambda-smoke rehearse rehearse-fast script-tests client-ts

help:
	@echo "make demo      the whole system on a local model: one task of each kind, live progress, results"
	@echo "make test      what CI runs: fmt, clippy, the dependency policy, every test, each function as a Lambda bootstrap invoked through cargo-lambda, template lint, rehearsal"
	@echo "make check     the fast loop: fmt, clippy, the tests that need no service (nothing to start)"
	@echo "make up        start Postgres, the SQS-compatible server and the local model; write .local/env (make services: the first two)"
	@echo "make down      stop them and delete their data"
	@echo "make serve     up, then every function behind one local dev server (foreground)"
	@echo "make rehearse  the stack as sam deploy configures it, locally: every function, its secrets and IAM policy"
	@echo "make stats     the local stack's live figures: tasks by status, queue depth, provider latency, tokens"
	@echo "make token     a token the dev server accepts (APP=my-app): for the console at /console, the CLI, curl"
	@echo "make bench     the benchmarks, side by side with their comparisons (BENCH_QUICK=1: short)"
	@echo "make simulate  10,000 skewed scopes, growing concurrency: limits exact, no starvation, p99"
	@echo "make growth    100 million tasks (about 1 h, 55 GB): the plan of every hot statement, to docs/growth"
	@echo "make chaos     2000 tasks through faults, kills and a Postgres restart; then long property runs"
	@echo "make fuzz      schemathesis against openapi.yaml: 1000 cases an operation, a new seed (make test: 100, fixed)"
	@echo "make load      64 HTTP clients for 60 s against the dev server: no 5xx, no lost task, latencies"
	@echo "make audit     the RustSec advisories over both lockfiles (AUDIT_DB=path: a local clone of the database)"
	@echo "make sbom      a CycloneDX SBOM for each function, beside its build (target/lambda/<fn>/bootstrap.cdx.json)"
	@echo "make client-ts the TypeScript client: type drift check, strict tsc, type tests, unit tests, end to end on the dev server"
	@echo "parts of make test: warm fmt lint deny script-tests build unit client-ts template-lint lambda-smoke rehearse-fast local-model"

up: services
	@scripts/model.sh up

# What every test but one needs: Postgres and the SQS-compatible server (not the local model).
services:
	@scripts/postgres.sh up
	@scripts/sqs.sh up

down:
	@scripts/model.sh down
	@scripts/sqs.sh down
	@scripts/postgres.sh down

serve: up build
	@$(LOAD_ENV) "$$(source scripts/lib.sh && target_dir)/debug/aitasks-dev-server"

demo:
	@scripts/demo.sh

# The live figures of the local stack (tasks by status, queue depth, provider latency, tokens).
stats: build
	@$(LOAD_ENV) "$$(source scripts/lib.sh && target_dir)/debug/aitasks-dev-server" stats

# A token the dev server accepts, for tenant APP (default my-app), good for 12 hours: paste it
# into the console's sign-in (http://127.0.0.1:9000/console), or `export AITASKS_TOKEN=$$(make -s token)`.
token:
	@cargo build -q --workspace --all-targets
	@$(LOAD_ENV) "$$(source scripts/lib.sh && target_dir)/debug/aitasks-dev-server" token "$${APP:-my-app}"

bench:
	@scripts/bench.sh

simulate:
	@BENCH_ONLY=simulate scripts/bench.sh

growth:
	@scripts/growth.sh

# Both workspaces: the product (the root) and the harness (harness/: the benchmarks, the rehearsal).
fmt:
	cargo fmt --all -- --check
	cd harness && cargo fmt --all -- --check

# No service needed: unit tests and the integration tests that start nothing but themselves.
check: fmt lint
	cargo test -q --workspace --lib --bins
	cargo test -q -p aitasks-contracts -p aitasks-providers -p migrate -p aitasks-client --tests

lint:
	cargo clippy --workspace --all-targets -- -D warnings
	cd harness && cargo clippy --workspace --all-targets -- -D warnings

# The scripts' own tests (no service, seconds): scripts/tests/*.sh.
script-tests:
	@for t in scripts/tests/*.sh; do bash "$$t" || exit 1; done

# The dependency policy (deny.toml) that needs no advisory database: licenses, one version of
# each crate, banned crates, crates.io only. Both lockfiles, each against deny.toml (the
# working folder's).
deny:
	@$(TOOLS)/cargo-deny check licenses bans sources
	@$(TOOLS)/cargo-deny --manifest-path harness/Cargo.toml check licenses bans sources

# The RustSec advisories: cargo-deny (the gate) and cargo-audit. Fetches the database from
# GitHub, or reads AUDIT_DB=path.
audit:
	@scripts/audit.sh

sbom:
	@scripts/sbom.sh

# One selection for every build here (the tests build the dev server with it too): a narrower
# one (`-p aitasks-dev-server`) resolves the dependencies' features anew and compiles them again.
build:
	cargo build --workspace --all-targets

# The rehearsal's tests need the functions built as Lambda bootstraps (lambda-smoke): they run in rehearse-fast.
# The web console's browser tests (the `console` test binary) drive headless Chromium: installed
# from the OS packages when missing (scripts/chromium.sh).
# Every test but the one on the local model (`make local-model`, the last part of `make test`),
# then the harness's but the rehearsal's: the benchmark at its smallest (bench_smoke) and the
# bench's unit tests. The harness builds into the same target folder (harness/.cargo/config.toml).
unit: build services
	@scripts/chromium.sh install
	@$(LOAD_ENV) cargo test --workspace -- --skip local_model::
	@$(LOAD_ENV) cd harness && cargo test --workspace --exclude aitasks-rehearse

# The four kinds against the real local model: last in `make test`, so the model's build (started
# in the background by `make warm`) has the lint, the build and every other test to finish in.
# The workspace's selection, as `unit`'s: `-p aitasks-e2e` would resolve features anew and rebuild.
local-model: build up
	@$(LOAD_ENV) cargo test --workspace --test e2e local_model::

# cfn-lint, sam validate, then checkov (the IaC security scanner compliance pipelines run): a
# finding must be fixed, or skipped on its resource with a written reason (scripts/checkov_gate.py).
template-lint:
	@export AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test SAM_CLI_TELEMETRY=0; \
	  $(TOOLS)/cfn-lint template.yaml && $(TOOLS)/sam validate --lint --template template.yaml && \
	  $(TOOLS)/python scripts/checkov_gate.py $(TOOLS)/checkov template.yaml

# The TypeScript client (clients/typescript, examples/typescript): its dependencies from its
# lockfiles (npm's cache in the cache folder), the generated types checked against openapi.yaml,
# strict tsc on the package, its type tests and the example, unit tests on node's test runner,
# then end-to-end tests against the dev server on a stub provider (scripts/client-ts.sh).
client-ts: build services
	@scripts/client-ts.sh

lambda-smoke: build services
	@scripts/lambda-smoke.sh

# The deploy rehearsal (docs/deploying.md, "Rehearse it first: `make rehearse`"): template.yaml
# through the SAM transform, every function's release binary with exactly the environment, secrets
# and IAM policy the stack gives it, every AWS call judged. `make test` runs it on the bootstraps
# lambda-smoke laid out (the test build).
rehearse: services
	@scripts/rehearse.sh

rehearse-fast: services
	@scripts/rehearse.sh fast

# The long versions of what `make test` runs small (200 tasks; 400 cases; 5 s).
chaos: services build
	@$(LOAD_ENV) CHAOS_TASKS=$${CHAOS_TASKS:-2000} cargo test --workspace --test outages chaos:: -- --nocapture
	@PROPTEST_CASES=$${PROPTEST_CASES:-100000} cargo test --workspace --test contracts properties::

load: services build
	@$(LOAD_ENV) LOAD_SECONDS=$${LOAD_SECONDS:-60} cargo test --workspace --test e2e load:: -- --nocapture

# The OpenAPI fuzzer, longer than make test runs it and with a new seed each time.
fuzz: services build
	@$(LOAD_ENV) FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-1000} FUZZ_SEED=$${FUZZ_SEED-} cargo test --workspace --test e2e fuzz:: -- --nocapture

# The slow installs and the local model's build, in the background while cargo compiles (scripts/warm.sh).
warm:
	@scripts/warm.sh

test: warm fmt lint deny script-tests unit client-ts template-lint lambda-smoke rehearse-fast local-model
