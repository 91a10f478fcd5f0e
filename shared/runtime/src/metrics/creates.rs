//! What the creates emit: `Tasks` by result and by whether they were scoped.

use std::collections::BTreeMap;

use aitasks_store::{self as store, Created};

use super::{Document, Unit};

/// `Tasks` by `Result` (`new`, `cacheHit`: stored already succeeded from the result cache,
/// `existing`: the effect key's task) and by `Scoped`: one document per result seen, its count
/// the value. Refusals are counted by the request metric, by their code.
pub(crate) fn count_created<'a>(answers: impl IntoIterator<Item = (Option<&'a Created>, bool)>) {
    let mut counts: BTreeMap<(&str, bool), u32> = BTreeMap::new();
    for (answer, scoped) in answers {
        let result = match answer {
            Some(Created::New(task)) if task.status == store::TaskStatus::Succeeded => "cacheHit",
            Some(Created::New(_)) => "new",
            Some(Created::Existing(_)) => "existing",
            None => continue,
        };
        *counts.entry((result, scoped)).or_default() += 1;
    }
    for ((result, scoped), count) in counts {
        Document::new(&[&["Result"], &["Result", "Scoped"]])
            .dimension("Result", result)
            .dimension("Scoped", if scoped { "true" } else { "false" })
            .metric("Tasks", Unit::Count, f64::from(count))
            .emit();
    }
}
