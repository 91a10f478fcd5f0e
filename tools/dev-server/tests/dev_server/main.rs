//! The dev server's own promises: who may reach it, the figures `make stats` prints, the
//! tokens `make token` prints.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exposure;
mod hosts;
mod stats;
mod token;
