//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};
use uuid::Uuid;

/// `aitasks`: create, follow and steer aitasks tasks and runs through the public HTTP API.
///
/// The base URL and the token come from `--url`/`--token`, else `AITASKS_URL`/`AITASKS_TOKEN`,
/// else the config file (`--config`, `AITASKS_CONFIG`, or `$XDG_CONFIG_HOME/aitasks/config.toml`,
/// by default `~/.config/aitasks/config.toml`). The URL defaults to the dev server,
/// http://127.0.0.1:9000. A token from the config file is sent only to the file's own `url` (the
/// default URL when it names none): another URL needs its token from `--token`/`AITASKS_TOKEN`.
/// Plain http:// is for loopback only (127.0.0.0/8, [::1], localhost) unless
/// `--allow-insecure-http`.
///
/// Exit status: 0 done; 1 the API refused (its code is printed), a batch item was refused,
/// `wait` saw the task end failed or canceled, or a followed operation ended stopped; 2 bad usage
/// or input (nothing was sent); 3 no usable answer (unreachable, or not the API);
/// 4 `wait`/`tail`/`--wait` reached `--timeout` first.
#[derive(Debug, Parser)]
#[command(name = "aitasks", version, about, long_about)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct Global {
    /// The API's base URL [default: http://127.0.0.1:9000]
    #[arg(long, global = true, env = "AITASKS_URL", value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The bearer token (a JWT whose app claim is your tenant)
    #[arg(long, global = true, env = "AITASKS_TOKEN", hide_env_values = true, value_name = "JWT")]
    pub(crate) token: Option<String>,
    /// The config file (TOML: `url`, `token`). Its token goes only to its own `url` (or, when
    /// it names none, the default URL)
    #[arg(long, global = true, env = "AITASKS_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Send the token over plain http:// to a host that is not this machine's loopback
    /// (127.0.0.0/8, [::1], localhost), which is refused otherwise
    #[arg(long, global = true, env = "AITASKS_ALLOW_INSECURE_HTTP")]
    pub(crate) allow_insecure_http: bool,
    /// Print JSON for scripts (one document; `tail`: one line per change)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Tries per request on 429 and 5xx (1: no retries)
    #[arg(long, global = true, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub(crate) tries: u32,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create a task (201 created, or 200 the effect key's existing task)
    Create(CreateArgs),
    /// Read a task, by id or by effect key
    Get(GetArgs),
    /// Wait for a task to end, with a live status line (--follow: its answer as it is written)
    Wait(WaitArgs),
    /// Cancel a task; with --run alone a run (it takes no new tasks, its open tasks end
    /// canceled); with filter flags (--run R | --scope S | --all, and --status, --kind, ...)
    /// every task they match, as an operation (--wait follows its progress)
    Cancel(CancelArgs),
    /// Replay an ended task: a new task with its request, model, owner and scope (the original
    /// is untouched); with filter flags (--run R | --scope S | --all, and --status, --kind, ...)
    /// every task they match, as an operation (--wait follows its progress)
    Replay(ReplayArgs),
    /// Operations (cancel or replay by filter): list, get, wait for, stop
    #[command(subcommand)]
    Operations(OperationsCommand),
    /// Hold a model profile or a scope: its tasks stay queued, spend no attempt and do not expire
    /// until the hold is released
    Hold(HoldArgs),
    /// List the holds: yours and the automatic ones (a profile whose provider keeps failing)
    Holds(HoldsArgs),
    /// Release a hold: its tasks are sent again, in creation order
    ReleaseHold(ReleaseHoldArgs),
    /// Runs: create, read, cancel, list
    #[command(subcommand)]
    Runs(RunsCommand),
    /// A task's history: its attempts (each with its error, tokens and cost), its completion
    /// events, its callbacks (never a token) and the provider batch it was sent in
    History(HistoryArgs),
    /// Your tasks created in a window (the last 7 days by default, at most 31), by status, and
    /// their tokens and estimated cost by day and model
    Summary(SummaryArgs),
    /// List a run's or a scope's tasks, page by page
    List(ListArgs),
    /// Create the tasks of a JSONL file (one create body a line), in chunks of up to 1,000 (on a
    /// terminal, a bar of the items sent and refused on standard error)
    Batch(BulkArgs),
    /// Follow a run's tasks as they change (on a terminal, the run's bar below them on standard
    /// error)
    Tail(TailArgs),
    /// Print a shell completion script
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// A create body (JSON, docs/api.md "The create body"); `-` reads standard input
    #[arg(long, short, value_name = "FILE", conflicts_with_all = [
        "run", "scope", "step", "effect_key", "model", "kind", "prompt", "input", "choices", "fields",
        "max_output_chars",
    ])]
    pub(crate) file: Option<PathBuf>,
    /// The run the task belongs to
    #[arg(long, value_name = "RUN_ID", conflicts_with = "scope")]
    pub(crate) run: Option<Uuid>,
    /// The scope of an application-owned task
    #[arg(long, value_name = "SCOPE_ID")]
    pub(crate) scope: Option<String>,
    /// The step key
    #[arg(long, value_name = "KEY")]
    pub(crate) step: Option<String>,
    /// The effect key (one task per key: a second create answers the first task)
    #[arg(long, value_name = "KEY")]
    pub(crate) effect_key: Option<String>,
    /// The model profile
    #[arg(long, default_value = "default", value_name = "ID")]
    pub(crate) model: String,
    /// generate_text, classify, classify_many or extract_data
    #[arg(long)]
    pub(crate) kind: Option<String>,
    /// The instructions (never end-user text: that goes in --input)
    #[arg(long)]
    pub(crate) prompt: Option<String>,
    /// The input, as JSON (a bare word is taken as a string)
    #[arg(long, value_name = "JSON")]
    pub(crate) input: Option<String>,
    /// A choice (classify, classify_many); repeat it, or separate with commas
    #[arg(long = "choice", value_delimiter = ',', value_name = "CHOICE")]
    pub(crate) choices: Vec<String>,
    /// The fields of extract_data, as a JSON array
    #[arg(long, value_name = "JSON")]
    pub(crate) fields: Option<String>,
    /// generate_text's maxOutputChars
    #[arg(long, value_name = "N")]
    pub(crate) max_output_chars: Option<u64>,
    /// Then wait for the task to end, at most this many seconds
    #[arg(long, value_name = "SECONDS")]
    pub(crate) wait: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The task's id
    #[arg(required_unless_present = "effect_key")]
    pub(crate) id: Option<Uuid>,
    /// Find the task by its effect key instead
    #[arg(long, value_name = "KEY", conflicts_with = "id")]
    pub(crate) effect_key: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct WaitArgs {
    pub(crate) id: Uuid,
    /// Give up after this many seconds (exit 4)
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub(crate) timeout: u64,
    /// Print the answer to standard output as the model writes it (live output: a read unit per
    /// long poll of up to 20 s); when a retry or a repair turn starts the answer over, its text
    /// starts on a new line after `--- attempt N (segment S): the answer starts over ---` on
    /// standard error. With --json, a JSON line per piece of text
    /// ({text, segment, attempt, restarted, next}), then the task on one line. The end is as without
    /// it: the task, and the same exit status
    #[arg(long)]
    pub(crate) follow: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CancelArgs {
    /// The task's id
    #[arg(required_unless_present_any = ["run", "scope", "all"], conflicts_with_all = FILTER_FLAGS)]
    pub(crate) id: Option<Uuid>,
    #[command(flatten)]
    pub(crate) filter: FilterArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The ended task's id (succeeded, failed or canceled)
    #[arg(required_unless_present_any = ["run", "scope", "all"], conflicts_with_all = FILTER_FLAGS)]
    pub(crate) id: Option<Uuid>,
    /// The new task's effect key [default: replay:<taskId>, so the same replay asked twice is one
    /// task]
    #[arg(long, value_name = "KEY", conflicts_with = "target")]
    pub(crate) effect_key: Option<String>,
    /// Ask the provider again even when the result cache holds the answer
    #[arg(long)]
    pub(crate) recompute: bool,
    #[command(flatten)]
    pub(crate) filter: FilterArgs,
}

/// The flags that make `cancel`/`replay` an operation over the tasks they match.
pub(crate) const FILTER_FLAGS: [&str; 12] = [
    "run",
    "scope",
    "all",
    "status",
    "kind",
    "model",
    "error_code",
    "created_after",
    "created_before",
    "idempotency_key",
    "wait",
    "timeout",
];

/// Which tasks an operation acts on: one of --run, --scope, --all, then what narrows.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["run", "scope", "all"]).multiple(false)))]
pub(crate) struct FilterArgs {
    /// A run's tasks (`cancel --run R` alone cancels the run itself)
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run: Option<Uuid>,
    /// A scope's tasks
    #[arg(long, value_name = "SCOPE_ID")]
    pub(crate) scope: Option<String>,
    /// Every task of yours
    #[arg(long)]
    pub(crate) all: bool,
    /// Only tasks in these statuses (repeat it, or separate with commas) [default: cancel
    /// queued,running; replay failed,canceled]
    #[arg(long, value_delimiter = ',', requires = "target")]
    pub(crate) status: Vec<String>,
    /// Only tasks of this kind (generate_text, classify, classify_many, extract_data)
    #[arg(long, requires = "target")]
    pub(crate) kind: Option<String>,
    /// Only tasks of this model id
    #[arg(long, value_name = "MODEL_ID", requires = "target")]
    pub(crate) model: Option<String>,
    /// Only tasks that ended with this error code
    #[arg(long, value_name = "CODE", requires = "target")]
    pub(crate) error_code: Option<String>,
    /// Only tasks created at or after this instant (RFC 3339, such as 2026-01-31T12:00:00Z)
    #[arg(long, value_name = "TIME", requires = "target")]
    pub(crate) created_after: Option<String>,
    /// Only tasks created before this instant (RFC 3339)
    #[arg(long, value_name = "TIME", requires = "target")]
    pub(crate) created_before: Option<String>,
    /// The Idempotency-Key to send (1 to 255 visible ASCII characters): running the command
    /// again with it answers the same operation [default: a new one for each command]
    #[arg(long, value_name = "KEY", requires = "target")]
    pub(crate) idempotency_key: Option<String>,
    /// Then follow the operation until it ends, a line per change of its counts
    #[arg(long, requires = "target")]
    pub(crate) wait: bool,
    /// With --wait: give up after this many seconds (exit 4; the operation goes on)
    #[arg(long, default_value_t = 3600, value_name = "SECONDS", requires = "wait")]
    pub(crate) timeout: u64,
}

impl FilterArgs {
    /// Whether the flags ask for an operation (`cancel --run R` alone is a run's cancel).
    pub(crate) fn is_operation(&self) -> bool {
        self.scope.is_some()
            || self.all
            || !self.status.is_empty()
            || self.kind.is_some()
            || self.model.is_some()
            || self.error_code.is_some()
            || self.created_after.is_some()
            || self.created_before.is_some()
            || self.idempotency_key.is_some()
            || self.wait
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum OperationsCommand {
    /// List your operations in creation order
    List(OperationsListArgs),
    /// Read an operation: its filter, state and counts (and why tasks were skipped or failed)
    Get { id: Uuid },
    /// Follow an operation until it ends, a line per change of its counts
    Wait {
        id: Uuid,
        /// Give up after this many seconds (exit 4; the operation goes on)
        #[arg(long, default_value_t = 3600, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Stop an operation: it acts on no more tasks (those it acted on stay as they are)
    Stop { id: Uuid },
}

#[derive(Debug, Args)]
pub(crate) struct OperationsListArgs {
    /// Only operations in this state (running, stopped, done)
    #[arg(long)]
    pub(crate) state: Option<String>,
    /// Start after this operation id (a page's `next`)
    #[arg(long, value_name = "OPERATION_ID")]
    pub(crate) after: Option<Uuid>,
    /// Stop after this many operations
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("held").args(["profile", "scope"]).required(true)))]
pub(crate) struct HoldArgs {
    /// Hold a model profile: a task waits while every profile of its chain is held
    #[arg(long, value_name = "PROFILE")]
    pub(crate) profile: Option<String>,
    /// Hold a scope's tasks
    #[arg(long, value_name = "SCOPE_ID")]
    pub(crate) scope: Option<String>,
    /// Why (1 to 500 characters), shown with the hold
    #[arg(long)]
    pub(crate) reason: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct HoldsArgs {
    /// The released holds instead of the active ones
    #[arg(long)]
    pub(crate) released: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReleaseHoldArgs {
    /// The hold's id
    pub(crate) id: Uuid,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RunsCommand {
    /// Create a run in a scope. Its retries are safe: each create sends an Idempotency-Key, the
    /// same on every try, so a retry after a lost answer finds the run instead of making another
    Create {
        #[arg(long, value_name = "SCOPE_ID")]
        scope: String,
        /// The user who started it
        #[arg(long, value_name = "USER_ID")]
        actor: Option<String>,
        /// The Idempotency-Key to send (1 to 255 visible ASCII characters): running the command
        /// again with it answers the same run [default: a new one for each command]
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
    },
    /// Read a run and its tasks by status (on a terminal, as a bar)
    Get { id: Uuid },
    /// Cancel a run: its queued tasks end canceled, running ones are aborted
    Cancel { id: Uuid },
    /// List your runs in creation order, each with its tasks counted by status
    List(RunsListArgs),
}

#[derive(Debug, Args)]
pub(crate) struct RunsListArgs {
    /// Only runs in this state (running, canceled)
    #[arg(long)]
    pub(crate) status: Option<String>,
    /// Only runs of this scope
    #[arg(long, value_name = "SCOPE_ID")]
    pub(crate) scope: Option<String>,
    /// Only runs created at or after this instant (RFC 3339, such as 2026-01-31T12:00:00Z)
    #[arg(long, value_name = "TIME")]
    pub(crate) created_after: Option<String>,
    /// Only runs created before this instant (RFC 3339)
    #[arg(long, value_name = "TIME")]
    pub(crate) created_before: Option<String>,
    /// Start after this run id (a page's `next`)
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) after: Option<Uuid>,
    /// Stop after this many runs
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,
    /// Runs per request (1..100)
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub(crate) page_size: u16,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The task's id
    pub(crate) id: Uuid,
}

#[derive(Debug, Args)]
pub(crate) struct SummaryArgs {
    /// Tasks created at or after this instant (RFC 3339) [default: 7 days before --created-before]
    #[arg(long, value_name = "TIME")]
    pub(crate) created_after: Option<String>,
    /// Tasks created before this instant (RFC 3339) [default: now]
    #[arg(long, value_name = "TIME")]
    pub(crate) created_before: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct Owner {
    /// A run's tasks
    #[arg(long, value_name = "RUN_ID", required_unless_present = "scope", conflicts_with = "scope")]
    pub(crate) run: Option<Uuid>,
    /// A scope's tasks (its application-owned tasks and its runs' tasks)
    #[arg(long, value_name = "SCOPE_ID")]
    pub(crate) scope: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) owner: Owner,
    /// Only tasks in this status (queued, running, succeeded, failed, canceled)
    #[arg(long)]
    pub(crate) status: Option<String>,
    /// Only tasks of this kind (generate_text, classify, classify_many, extract_data)
    #[arg(long)]
    pub(crate) kind: Option<String>,
    /// Only tasks of this model id
    #[arg(long, value_name = "MODEL_ID")]
    pub(crate) model: Option<String>,
    /// Only tasks created at or after this instant (RFC 3339, such as 2026-01-31T12:00:00Z)
    #[arg(long, value_name = "TIME")]
    pub(crate) created_after: Option<String>,
    /// Only tasks created before this instant (RFC 3339)
    #[arg(long, value_name = "TIME")]
    pub(crate) created_before: Option<String>,
    /// Start after this task id (a page's `next`)
    #[arg(long, value_name = "TASK_ID")]
    pub(crate) after: Option<Uuid>,
    /// Stop after this many tasks
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,
    /// Tasks per request (1..100)
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub(crate) page_size: u16,
}

#[derive(Debug, Args)]
pub(crate) struct BulkArgs {
    /// A JSONL file: one create body a line (blank lines skipped); `-` reads standard input.
    /// Every line is checked before anything is sent.
    pub(crate) file: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct TailArgs {
    /// The run to follow
    #[arg(long, value_name = "RUN_ID")]
    pub(crate) run: Uuid,
    /// Seconds between two reads of the run's tasks
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub(crate) interval: f64,
    /// Stop once the run has tasks and every one has ended
    #[arg(long)]
    pub(crate) until_done: bool,
    /// Stop after this many seconds (exit 4 with --until-done)
    #[arg(long, value_name = "SECONDS")]
    pub(crate) timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    pub(crate) shell: clap_complete::Shell,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
        let parsed =
            <Cli as clap::Parser>::try_parse_from(["aitasks", "create", "--file", "b.json", "--model", "m"]);
        assert!(parsed.is_err(), "a body from a file takes no body flags");
        let parsed = <Cli as clap::Parser>::try_parse_from(["aitasks", "cancel"]);
        assert!(parsed.is_err(), "a task id or --run");
        let parse = |args: &[&str]| <Cli as clap::Parser>::try_parse_from(args).map(|cli| cli.command);
        let id = "01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e0f";
        assert!(parse(&["aitasks", "replay"]).is_err(), "a task id, or which tasks");
        assert!(parse(&["aitasks", "replay", id, "--scope", "s"]).is_err(), "one task or a filter");
        assert!(parse(&["aitasks", "cancel", "--status", "queued"]).is_err(), "a filter names its tasks");
        assert!(
            parse(&["aitasks", "cancel", "--run", id, "--scope", "s"]).is_err(),
            "one of run, scope, all"
        );
        assert!(parse(&["aitasks", "replay", "--all", "--effect-key", "k"]).is_err(), "a key is one task's");
        assert!(parse(&["aitasks", "hold", "--reason", "down"]).is_err(), "a profile or a scope");
        let Ok(super::Command::Cancel(run)) = parse(&["aitasks", "cancel", "--run", id]) else { panic!() };
        assert!(!run.filter.is_operation(), "a run's own cancel");
        let Ok(super::Command::Cancel(tasks)) =
            parse(&["aitasks", "cancel", "--run", id, "--status", "queued"])
        else {
            panic!()
        };
        assert!(tasks.filter.is_operation(), "the run's queued tasks, by an operation");
        let Ok(super::Command::Replay(all)) =
            parse(&["aitasks", "replay", "--all", "--status", "failed,canceled", "--wait"])
        else {
            panic!()
        };
        assert_eq!((all.filter.status.len(), all.filter.wait), (2, true));
        let parsed = <Cli as clap::Parser>::try_parse_from(["aitasks", "list", "--run", "x"]);
        assert!(parsed.is_err(), "a run id is a UUID");
    }
}
