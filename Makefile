# aitasks: every command a newcomer needs. See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
# Load .local/env (written by `make up`); variables already set in the environment win.
LOAD_ENV := set -a; [ -f .local/env ] && source <(grep -v '^\#' .local/env | sed -E 's/^export ([A-Z_]+)=(.*)/: "$${\1:=\2}"/'); set +a;

.PHONY: help up down test fmt lint unit

help:
	@echo "make up      start local dependencies (PostgreSQL), write .local/env"
	@echo "make down    stop them and delete their data"
	@echo "make test    fmt, clippy and every test (starts what it needs)"

up:
	@scripts/postgres.sh up

down:
	@scripts/postgres.sh down

fmt:
	cargo fmt --all -- --check

lint:
	cargo clippy --workspace --all-targets -- -D warnings

unit: up
	@$(LOAD_ENV) cargo test --workspace

test: fmt lint unit
