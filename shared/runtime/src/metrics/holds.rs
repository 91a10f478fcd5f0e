//! The automatic hold's metrics (docs/api.md, "Holds"): a profile held, released, and each probe
//! call made while it is held. `ProfileHeld` has an alarm (template.yaml).

use super::{Document, Unit};

fn count(metric: &'static str, model_id: &str) {
    Document::new(&[&["ModelId"], &[]])
        .dimension("ModelId", model_id)
        .metric(metric, Unit::Count, 1.0)
        .emit();
}

/// The profile's provider kept failing: it is held for every tenant.
pub(crate) fn profile_held(model_id: &str) {
    count("ProfileHeld", model_id);
}

/// A probe the provider answered released the profile's automatic hold.
pub(crate) fn profile_released(model_id: &str) {
    count("ProfileReleased", model_id);
}

/// A probe call made to a held profile.
pub(crate) fn hold_probe(model_id: &str) {
    count("HoldProbes", model_id);
}
