//! `hold`, `holds`, `release-hold`.

use aitasks_client::{Client, HoldState, HoldTarget, ListHolds, Outcome};
use futures::TryStreamExt;
use serde_json::json;

use crate::args::{HoldArgs, HoldsArgs};
use crate::failure::Failure;
use crate::output;

pub(crate) async fn hold(client: &Client, args: &HoldArgs, json: bool) -> Result<(), Failure> {
    let target = match (&args.profile, &args.scope) {
        (Some(profile), None) => HoldTarget::Profile(profile.clone()),
        (None, Some(scope)) => HoldTarget::Scope(scope.clone()),
        _ => return Err(Failure::Input("give --profile or --scope".into())),
    };
    let created = client.create_hold(&target, args.reason.as_deref()).await?;
    if json {
        output::json(&created);
    } else {
        let word = match created.outcome {
            Outcome::Created => "created",
            Outcome::Existing => "existing",
        };
        println!("{word} {}", output::hold_line(&created.hold));
    }
    Ok(())
}

pub(crate) async fn holds(client: &Client, args: &HoldsArgs, json: bool) -> Result<(), Failure> {
    let state = if args.released { HoldState::Released } else { HoldState::Active };
    let holds: Vec<_> =
        client.holds(ListHolds { state: Some(state), ..ListHolds::default() }).try_collect().await?;
    if json {
        output::json(&json!({"holds": holds, "count": holds.len()}));
    } else {
        for hold in &holds {
            println!("{}", output::hold_line(hold));
        }
        eprintln!("{} {} holds", holds.len(), state.as_str());
    }
    Ok(())
}

pub(crate) async fn release(client: &Client, id: uuid::Uuid, json: bool) -> Result<(), Failure> {
    let hold = client.release_hold(id).await?;
    if json {
        output::json(&hold);
    } else {
        println!("{}", output::hold_line(&hold));
    }
    Ok(())
}
