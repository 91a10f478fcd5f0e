//! What this instance knows of the automatic hold's counts (`profile_failures`, migrations/V34):
//! the profiles whose count it saw above zero. A call the provider answers resets a profile's
//! count with a statement only when the profile is here, so the healthy path runs none: a count
//! raised by another instance is reset by that instance's next answered call, or by this one's
//! once one of its own calls fails there too.

use std::collections::HashSet;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub(crate) struct FailingProfiles {
    known: Mutex<HashSet<String>>,
}

impl FailingProfiles {
    /// A failure was counted at `profile` (its count is above zero now).
    pub(crate) fn failed(&self, profile: &str) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(profile.to_owned());
        }
    }

    /// The provider answered at `profile`: whether its count must be reset (this instance saw
    /// it above zero). Forgotten here either way; the caller resets it.
    pub(crate) fn answered(&self, profile: &str) -> bool {
        self.known.lock().map(|mut known| known.remove(profile)).unwrap_or(false)
    }
}
