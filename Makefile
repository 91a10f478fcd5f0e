# aitasks: every command a newcomer needs. See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# Load .local/env (written by `make up`); variables already set in the environment win.
LOAD_ENV := set -a; [ -f .local/env ] && source <(sed -E 's/^export ([A-Z0-9_]+)=(.*)$$/: "$${\1:=\2}"/' .local/env); set +a;

.PHONY: help up down serve test fmt lint build unit

help:
	@echo "make up      start local dependencies (PostgreSQL, the SQS-compatible server), write .local/env"
	@echo "make down    stop them and delete their data"
	@echo "make serve   up, then every function behind one local dev server (foreground)"
	@echo "make test    fmt, clippy and every test (starts what it needs)"

up:
	@scripts/postgres.sh up
	@scripts/sqs.sh up

down:
	@scripts/sqs.sh down
	@scripts/postgres.sh down

serve: up
	@cargo build -p aitasks-dev-server
	@$(LOAD_ENV) target/debug/aitasks-dev-server

fmt:
	cargo fmt --all -- --check

lint:
	cargo clippy --workspace --all-targets -- -D warnings

build:
	cargo build --workspace --all-targets

unit: up build
	@$(LOAD_ENV) cargo test --workspace

test: fmt lint unit
