//! The dev server's own promises: who may reach it, and the figures `make stats` prints.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exposure;
mod stats;
