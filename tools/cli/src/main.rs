//! `aitasks`: the command line of the aitasks HTTP API (docs/console-and-cli.md, "Command line").

mod args;
mod bulk;
mod config;
mod failure;
mod follow;
mod history;
mod holds;
mod listing;
mod operations;
mod output;
mod progress;
mod replay;
mod runs;
mod shown;
mod summary;
mod tail;
mod tasks;
mod times;

use std::process::ExitCode;

use aitasks_client::{Client, RetryPolicy};
use clap::{CommandFactory, Parser};

use crate::args::{Cli, Command};
use crate::config::Settings;
use crate::failure::Failure;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Completions(args) = &cli.command {
        clap_complete::generate(args.shell, &mut Cli::command(), "aitasks", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return ExitCode::from(3);
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // Bad lines, refused batch items and an ended task were reported already.
            if !matches!(failure, Failure::Refused(_) | Failure::Ended(_) | Failure::Lines(_)) {
                if cli.global.json {
                    output::json_line(&failure.to_json());
                }
                eprintln!("error: {failure}");
            }
            failure.exit_code()
        }
    }
}

async fn run(cli: &Cli) -> Result<(), Failure> {
    let settings = Settings::resolve(&cli.global)?;
    let retry = RetryPolicy { max_tries: cli.global.tries, ..RetryPolicy::default() };
    let client = Client::builder(settings.url).token(settings.token).retry(retry).build()?;
    let json = cli.global.json;
    match &cli.command {
        Command::Create(args) => tasks::create(&client, args, json).await,
        Command::Get(args) => tasks::get(&client, args, json).await,
        Command::Wait(args) if args.follow => follow::wait(&client, args.id, args.timeout, json).await,
        Command::Wait(args) => tasks::wait(&client, args.id, args.timeout, json).await,
        Command::Cancel(args) => tasks::cancel(&client, args, json).await,
        Command::Replay(args) => replay::replay(&client, args, json).await,
        Command::Operations(command) => operations::run(&client, command, json).await,
        Command::Hold(args) => holds::hold(&client, args, json).await,
        Command::Holds(args) => holds::holds(&client, args, json).await,
        Command::ReleaseHold(args) => holds::release(&client, args.id, json).await,
        Command::Runs(command) => runs::run(&client, command, json).await,
        Command::History(args) => history::history(&client, args.id, json).await,
        Command::Summary(args) => summary::summary(&client, args, json).await,
        Command::List(args) => listing::list(&client, args, json).await,
        Command::Tail(args) => tail::tail(&client, args, json).await,
        Command::Batch(args) => bulk::load(&client, args, json).await,
        Command::Completions(_) => Ok(()),
    }
}
