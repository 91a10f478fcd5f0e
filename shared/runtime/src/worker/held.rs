//! Whether a claimed task is held (docs/api.md, "Holds"), from the active holds its claim read
//! (`Task::holds`) and its profile chain, which only the worker knows: held when its scope has a
//! hold of its tenant, or when every profile of its chain is held (by its tenant, or
//! automatically). Otherwise the held profiles are passed over in the chain like one at its limit,
//! except an automatically held one whose probe this task is: its call is the probe.

use std::collections::HashMap;

use aitasks_providers::ModelProfile;
use aitasks_store::{ActiveHold, Task};
use uuid::Uuid;

/// What the holds leave an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Holds {
    /// Held: park the task under these holds.
    Held(Vec<Uuid>),
    /// Free to run: the held profiles to pass over (with the holds that hold each), and the
    /// profiles this task probes (the automatic hold it probes).
    Free { passed_over: HashMap<String, Vec<Uuid>>, probes: HashMap<String, Uuid> },
}

pub(super) fn holds_of(task: &Task, chain: &[&ModelProfile]) -> Holds {
    let scope_holds: Vec<Uuid> = task
        .holds
        .iter()
        .filter(|hold| hold.scope_id.is_some() && hold.scope_id == task.scope_id)
        .map(|hold| hold.id)
        .collect();
    if !scope_holds.is_empty() {
        return Holds::Held(scope_holds);
    }
    let mut passed_over: HashMap<String, Vec<Uuid>> = HashMap::new();
    let mut probes = HashMap::new();
    for profile in chain {
        let of_profile: Vec<&ActiveHold> =
            task.holds.iter().filter(|hold| hold.profile.as_deref() == Some(profile.id.as_str())).collect();
        if of_profile.is_empty() {
            continue;
        }
        let manual = of_profile.iter().any(|hold| !hold.automatic);
        match of_profile.iter().find(|hold| hold.automatic && hold.probe) {
            Some(probe) if !manual => {
                probes.insert(profile.id.clone(), probe.id);
            }
            _ => {
                passed_over.insert(profile.id.clone(), of_profile.iter().map(|hold| hold.id).collect());
            }
        }
    }
    if chain.iter().all(|profile| passed_over.contains_key(&profile.id)) {
        let mut all: Vec<Uuid> = passed_over.into_values().flatten().collect();
        all.sort_unstable();
        all.dedup();
        return Holds::Held(all);
    }
    Holds::Free { passed_over, probes }
}
