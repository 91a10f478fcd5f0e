//! End-to-end tests live in `e2e/`; event fixtures (API Gateway v2, SQS, EventBridge schedule)
//! in `fixtures/`. Run them with `make test`, or after `make up`:
//! `cargo build -p aitasks-dev-server && cargo test -p aitasks-e2e`.
