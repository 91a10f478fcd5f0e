//! Every limit of the contract (docs/api.md, "Limits"), defined once. The parsers, the store, the
//! API operations and the tests all use these.

/// Characters of a `stepKey`.
pub const STEP_KEY_MAX_CHARS: usize = 1_000;
/// Characters of an `effectKey`.
pub const EFFECT_KEY_MAX_CHARS: usize = 500;
/// Characters of a `modelId`.
pub const MODEL_ID_MAX_CHARS: usize = 120;
/// Characters of every other key and id (`scopeId`, `sourceId`, `sourceRevision`, ...).
pub const ID_MAX_CHARS: usize = 500;
/// The largest request, in bytes of its stored `jsonb` text (HTTP 413 above it; the database
/// holds the same limit as a CHECK constraint, migrations/V1).
pub const REQUEST_MAX_BYTES: usize = 100_000;
/// The largest create body parsed at all: ten times the stored request limit (whatever its
/// whitespace, a larger body cannot hold a request within it).
pub const MAX_CREATE_BODY_BYTES: usize = 10 * REQUEST_MAX_BYTES;
/// The longest stored error message, in characters (longer ones are truncated).
pub const ERROR_MESSAGE_MAX_CHARS: usize = 2_000;
/// The longest `?wait=` a caller may ask for, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 20;
/// Sources per page of the unreleased-sources listing.
pub const UNRELEASED_PAGE: usize = 100;
/// Budgets and counts are safe integers (they must survive a JavaScript client).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
/// Characters of a `prompt`.
pub const PROMPT_MAX_CHARS: usize = 20_000;
/// Nesting levels of `input`.
pub const INPUT_MAX_DEPTH: usize = 64;
/// `maxOutputChars` of `generate_text`: at most, and by default.
pub const MAX_OUTPUT_CHARS: i64 = 100_000;
pub const DEFAULT_MAX_OUTPUT_CHARS: i64 = 4_000;
/// How many `choices`, and the characters of each.
pub const CHOICES: (usize, usize) = (2, 200);
pub const CHOICE_CHARS: (usize, usize) = (1, 200);
/// How many `fields` an `extract_data` request has, and their names' and descriptions' lengths.
pub const FIELDS: (usize, usize) = (1, 100);
pub const FIELD_NAME_MAX_CHARS: usize = 64;
pub const FIELD_DESCRIPTION_MAX_CHARS: usize = 1_000;
/// `maxLength` of a text field: at most, and by default.
pub const TEXT_FIELD_MAX_LENGTH: i64 = 20_000;
/// Creates in one `POST /v1/tasks/batch`.
pub const BULK_MAX_TASKS: usize = 1_000;
/// The largest batch body: Lambda's synchronous invocation payload limit (6 MB) less room for
/// the rest of the API Gateway event. Larger is a 413 for the whole request.
pub const MAX_BULK_BODY_BYTES: usize = 6_000_000;
/// Tasks per page of `GET /v1/tasks?runId=` / `?scopeId=`: at most, and by default.
pub const TASK_PAGE_MAX: usize = 100;
/// Runs per page of `GET /v1/runs`: at most, and by default.
pub const RUN_PAGE_MAX: usize = 100;

/// Tasks counted a run in `GET /v1/runs`: a larger run is counted over its first ones and says
/// `more` (a page of runs reads at most `RUN_PAGE_MAX` × (this + 1) tasks).
pub const RUN_TASKS_COUNTED_MAX: usize = 1_000;

/// Tasks `GET /v1/runs/{runId}/progress` counts: a larger run is counted over its first ones
/// (by id, creation order) and says `complete: false`.
pub const RUN_PROGRESS_COUNTED_MAX: usize = 10_000;

/// Runs one `GET /v1/runs` answer looks at: with a filter that keeps few of them, the page is short
/// and `next` points past the last one looked at.
pub const RUN_SCAN_MAX: usize = 1_000;
/// Tasks one `GET /v1/tasks?runId=|scopeId=` answer looks at when it filters on `kind`,
/// `modelId` or the creation time: with filters that keep few of them, the page is short and
/// `next` points past the last one looked at.
pub const TASK_SCAN_MAX: usize = 1_000;
/// Attempts a task keeps on record (`GET /v1/tasks/{taskId}/attempts`): the last this many
/// (the attempt budget, `maxAttempts`, is at most 100 too). Held by the database trigger that
/// records them (migrations/V38).
pub const ATTEMPTS_KEPT_MAX: usize = 100;
/// Tasks one `GET /v1/summary` reads, newest first: past them the answer says `complete: false`.
pub const SUMMARY_SCAN_MAX: usize = 100_000;
/// The widest window of `GET /v1/summary`, in days.
pub const SUMMARY_WINDOW_MAX_DAYS: i64 = 31;
/// The window of `GET /v1/summary` without `createdAfter`: the days before `createdBefore`.
pub const SUMMARY_WINDOW_DEFAULT_DAYS: i64 = 7;
/// Items in one history answer of a task (`GET /v1/tasks/{taskId}/events`, `/callbacks`, `/attempts`): the
/// oldest this many, with `more` when there are others.
pub const HISTORY_ITEMS_MAX: usize = 100;
/// The largest answer that carries many tasks (a listing's page, a batch's results), in bytes
/// of its body as Lambda's response carries it: a JSON string, the answer's JSON escaped once
/// more ([`crate::response_body_bytes`]). Lambda refuses a response over 6 MB; the rest of the
/// response (status, headers) is far smaller than the margin.
pub const ANSWER_MAX_BYTES: usize = 5_000_000;
/// The largest output a task stores, in bytes of its JSON as Lambda's response carries it
/// ([`crate::escaped_json_bytes`]). A checked answer whose output is larger ends its task failed
/// with `AI_OUTPUT_TOO_LARGE` (a provider may ignore `max_tokens`, and `extract_data`'s limits
/// alone allow 2,000,000 characters). With the request (at most twice [`REQUEST_MAX_BYTES`] so
/// counted) and the rest of a task's body, an answer that carries one task stays within
/// [`ANSWER_MAX_BYTES`], so under Lambda's 6 MB, and a listing's page always has room for it.
pub const OUTPUT_MAX_BYTES: usize = 4_000_000;
/// The most the rest of a task's answer takes besides its request and output, counted as
/// [`OUTPUT_MAX_BYTES`] is: its keys (1,500 characters, up to 4 bytes each, twice), the stored
/// error message (2,000 characters), ids, timestamps, usage and field names, with room to spare.
const TASK_ENVELOPE_MAX_BYTES: usize = 100_000;
// An answer carrying one task fits a listing's budget, and so Lambda's 6 MB: a request counts at
// most twice its stored bytes once escaped (every byte a `"` or `\` at worst).
const _: () = assert!(OUTPUT_MAX_BYTES + 2 * REQUEST_MAX_BYTES + TASK_ENVELOPE_MAX_BYTES <= ANSWER_MAX_BYTES);
/// Problems listed in one 400's `details` (the rest are counted in `moreProblems`).
pub const PROBLEMS_MAX: usize = 50;
/// Problems listed in one batch's answer, over all its items.
pub const BULK_PROBLEMS_MAX: usize = 500;
/// Characters of a problem's `path` (a longer one, which echoes a caller's key, is cut, ending
/// in `…`).
pub const PROBLEM_PATH_MAX_CHARS: usize = 200;
/// Characters of a Step Functions task token (`callback.stepFunctions.taskToken`), as
/// `SendTaskSuccess` takes it.
pub const STEP_FUNCTIONS_TOKEN_MAX_CHARS: usize = 2_048;
/// Characters of a Lambda durable-function callback id (`callback.lambdaDurable.callbackId`).
pub const DURABLE_CALLBACK_ID_MAX_CHARS: usize = 1_024;
/// The largest answer a callback carries (Step Functions' task output, a durable callback's
/// `Result`): 256 KiB. A larger one is replaced by a small answer saying how to read the task.
pub const CALLBACK_RESULT_MAX_BYTES: usize = 262_144;
