//! What every binary says about itself: its logs ([`init_tracing`], the format Lambda's own
//! subscriber writes), its X-Ray traces ([`xray`]), and the one way an error and its causes
//! become text ([`error_chain`]). A crate of its own so that a function which needs nothing of
//! the runtime (`migrate`) logs the same way without linking it.

mod errors;
mod logs;
pub mod xray;

pub use errors::{error_chain, panic_text};
pub use logs::init_tracing;
