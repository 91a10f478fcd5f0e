//! `summary`: the tenant's tasks created in a window, by status, and their tokens and estimated
//! cost by day and model (docs/api.md, "History").

use aitasks_client::Client;

use crate::args::SummaryArgs;
use crate::failure::Failure;
use crate::output;
use crate::times::instant;

pub(crate) async fn summary(client: &Client, args: &SummaryArgs, json: bool) -> Result<(), Failure> {
    let created_after = instant("--created-after", args.created_after.as_deref())?;
    let created_before = instant("--created-before", args.created_before.as_deref())?;
    let summary = client.summary(created_after, created_before).await?;
    if json {
        output::json(&summary);
    } else {
        output::summary(&summary);
    }
    Ok(())
}
