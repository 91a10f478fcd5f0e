//! Whether a claimed task is held (docs/api.md, "Holds"), from the active holds its claim read
//! (`Task::holds`) and its profile chain, which only the worker knows: held when its scope has a
//! hold of its tenant, or when every profile of its chain is held (by its tenant, or
//! automatically). Otherwise the held profiles are passed over in the chain like one at its limit,
//! except an automatically held one whose probe this task is: its call is the probe. A task free
//! to run on a fallback takes the free probe lease of such a profile ([`take_free_probes`]): a
//! profile whose tasks all run on their fallbacks parks none, and would otherwise never be probed.

use std::collections::HashMap;

use aitasks_providers::ModelProfile;
use aitasks_store::{self as store, ActiveHold, Task};
use uuid::Uuid;

use crate::app::App;

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

/// A free task's chain passes over an automatically held profile whose probe lease is free (and
/// that its tenant does not hold by hand): take the lease, and the attempt calls that profile as
/// the probe rather than passing it over. One statement, only when such a hold is there; a store
/// that fails leaves the profile passed over (the sweeper's probe is the backstop).
pub(super) async fn take_free_probes<P>(
    app: &App<P>,
    task: &Task,
    chain: &[&ModelProfile],
    holds: Holds,
) -> Holds {
    let Holds::Free { mut passed_over, mut probes } = holds else { return holds };
    // Only the held profiles the attempt reaches before its first free one: a lease taken for a
    // profile after it would wait unused while that one answers.
    let free: Vec<(String, Uuid)> = chain
        .iter()
        .map_while(|profile| passed_over.get(&profile.id).map(|of_profile| (&profile.id, of_profile)))
        .filter_map(|(profile, of_profile)| {
            let holds: Vec<&ActiveHold> =
                task.holds.iter().filter(|hold| of_profile.contains(&hold.id)).collect();
            let manual = holds.iter().any(|hold| !hold.automatic);
            let lapsed = holds.iter().find(|hold| hold.automatic && hold.probe_free);
            lapsed.filter(|_| !manual).map(|hold| (profile.clone(), hold.id))
        })
        .collect();
    if free.is_empty() {
        return Holds::Free { passed_over, probes };
    }
    let Ok(client) = store::client(&app.pool).await else { return Holds::Free { passed_over, probes } };
    let probe = app.settings.runtime.holds.probe;
    for (profile, hold) in free {
        if let Ok(true) = store::claim_probe(&client, hold, task.id, probe).await {
            tracing::info!(profile = %profile, hold = %hold, "the held profile's probe lease was free: this attempt probes it");
            passed_over.remove(&profile);
            probes.insert(profile, hold);
        }
    }
    Holds::Free { passed_over, probes }
}
