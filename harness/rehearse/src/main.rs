//! `make rehearse`: deploy `template.yaml` locally as `sam deploy` would configure it, run every
//! function's release binary against local AWS endpoints, and judge each AWS call against the
//! function's own policy. Prints the report; exits non-zero when anything was refused or failed.
//!
//! `aitasks-rehearse [--template FILE] [--parameter Name=Value ...]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use aitasks_rehearse::{scenario, Failure, Options, Rehearsal};

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let root = aitasks_testkit::workspace_root();
    let mut options = Options::for_checkout(&root)?;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--template" => options.template = PathBuf::from(args.next().ok_or("--template needs a file")?),
            "--parameter" => {
                let pair = args.next().ok_or("--parameter needs Name=Value")?;
                let (name, value) = pair.split_once('=').ok_or("--parameter needs Name=Value")?;
                options.parameters.insert(name.to_owned(), value.to_owned());
            }
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    let rehearsal = Rehearsal::prepare(options).await?;
    let report = scenario::run(&rehearsal).await;
    rehearsal.cleanup().await;
    print!("{}", report.render());
    if report.passed() {
        Ok(())
    } else {
        std::process::exit(1)
    }
}
