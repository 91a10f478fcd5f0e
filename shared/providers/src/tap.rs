//! Where a call's answer goes while the model writes it (docs/api.md, "Live output"). The
//! provider client reads a streamed answer and tells a [`Tap`] each piece of its text; the
//! worker's tap keeps them where a reader can resume them. The answer itself is assembled,
//! checked and repaired as a whole answer is: a tap sees the text, never decides anything.

/// Told the text of each call's answer as it arrives. Called from the call's own task, so each
/// method returns at once (a tap that writes somewhere hands the work to its own task).
pub trait Tap: Send + Sync {
    /// A call begins: its text, if it streams any, is a segment of its own.
    fn begin(&self);
    /// More of the answer's text, in order; never empty.
    fn text(&self, text: &str);
    /// The call's answer has ended, whole or not (an error after some text). Not called when
    /// the call is dropped (canceled, out of time): its tap's owner stops it.
    fn end(&self);
}

/// A tap that keeps nothing: a call with no reader (a batch line's repair, tests).
pub struct NoTap;

impl Tap for NoTap {
    fn begin(&self) {}
    fn text(&self, _text: &str) {}
    fn end(&self) {}
}
