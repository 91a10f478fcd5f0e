//! The probe: every hot path of the store, run through the store's own functions.

use std::time::{Duration, Instant};

use aitasks_store::{self as store, NewRun, NewTask, ScopedAdmission, TaskOwner};
use serde_json::json;
use uuid::Uuid;

use super::REPEATS;
use crate::Failure;

/// The application, scope and source the probe works in (they exist in the generated data).
const APP: &str = "app-07";
const SCOPE: &str = "scope-1307";
const SOURCE: &str = "doc-12";

/// Wall time of each operation's runs, by operation.
pub(crate) type Timings = Vec<(&'static str, Vec<Duration>)>;

fn new_task(owner: TaskOwner, effect_key: String) -> NewTask {
    NewTask {
        app_id: APP.into(),
        owner,
        step_key: "step-3".into(),
        effect_key,
        kind: "classify".into(),
        request: json!({"kind": "classify", "input": {"text": "Where is my parcel?"},
                        "labels": ["billing", "shipping", "other"]}),
        input_hash: format!("{:064x}", 7),
        model_id: "gpt-4o-mini".into(),
        model_ref: None,
        model_config_hash: Some(format!("{:064x}", 9)),
        max_attempts: 3,
        trace_header: None,
        deferred_window_ms: None,
        awaiting_batch: false,
        has_poller: false,
        scope_terms: None,
        replay_of: None,
        replay_operation: None,
    }
}

fn admission(cache_key: String, recompute: bool) -> ScopedAdmission {
    ScopedAdmission {
        source_id: SOURCE.into(),
        cache_key,
        recompute,
        budget: aitasks_testkit::ROOMY_BUDGET,
        limits: aitasks_store::ServerLimits::default(),
    }
}

/// Every hot path of the store, each run [`REPEATS`] times under its own `application_name`
/// (the log line prefix carries it, so each plan is attributed to its operation). Inputs the
/// operations need are made under the name `growth-setup`, whose plans are not reported.
pub(crate) async fn probe(owner_url: &str) -> Result<Timings, Failure> {
    let pool = store::connect(&store::PoolSettings { max_size: 1, ..store::PoolSettings::new(owner_url) })?;
    let mut client = store::client(&pool).await?;
    client
        .batch_execute(
            "SET application_name = 'growth-setup'; SET auto_explain.log_min_duration = 0; \
             SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; \
             SET auto_explain.log_timing = on; SET auto_explain.log_nested_statements = off",
        )
        .await?;
    let run_id: Uuid = client
        .query_one(
            "SELECT id FROM runs WHERE app_id = $1 AND state = 'running' ORDER BY created_at DESC LIMIT 1",
            &[&APP],
        )
        .await?
        .get(0);
    let cached_key: String = client
        .query_one(
            "SELECT cache_key FROM tasks WHERE app_id = $1 AND scope_id = $2 AND status = 'succeeded' \
             AND cache_key IS NOT NULL ORDER BY completed_at DESC LIMIT 1",
            &[&APP, &SCOPE],
        )
        .await?
        .get(0);
    let owned = || TaskOwner::Application {
        scope_id: SCOPE.into(),
        usage_subject: Some(json!({"userId": "user-1"})),
    };
    let key = || format!("growth-{}", Uuid::new_v4());
    let mut timings: Timings = Vec::new();

    // Runs `$body` REPEATS times (with `$i` the repeat) under the operation's name.
    macro_rules! operation {
        ($name:expr, |$i:ident| $body:block) => {{
            // A name may hold a quote ("a run's tasks"): bound, not spliced.
            client.execute("SELECT set_config('application_name', $1, false)", &[&$name]).await?;
            let mut runs = Vec::with_capacity(REPEATS);
            for $i in 0..REPEATS {
                let started = Instant::now();
                $body
                runs.push(started.elapsed());
            }
            timings.push(($name, runs));
            client.batch_execute("SET application_name = 'growth-setup'").await?;
        }};
    }

    let (mut run_tasks, mut run_keys, mut scoped_tasks, mut scoped_keys) = (vec![], vec![], vec![], vec![]);
    operation!("create: run task", |_i| {
        let effect_key = key();
        let created =
            store::create_task(&client, &new_task(TaskOwner::Run(run_id), effect_key.clone())).await?;
        run_tasks.push(created.task().id);
        run_keys.push(effect_key);
    });
    operation!("create: replay of an effect key", |i| {
        let created =
            store::create_task(&client, &new_task(TaskOwner::Run(run_id), run_keys[i].clone())).await?;
        if created.is_new() {
            return Err("a replayed effect key created a second task".into());
        }
    });
    operation!("create: scoped, cache miss (admission)", |_i| {
        let effect_key = key();
        let created = store::create_scoped(
            &mut client,
            &new_task(owned(), effect_key.clone()),
            &admission(key(), false),
        )
        .await?;
        scoped_tasks.push(created.created.task().id);
        scoped_keys.push(effect_key);
    });
    operation!("create: scoped, cache hit", |_i| {
        let created = store::create_scoped(
            &mut client,
            &new_task(owned(), key()),
            &admission(cached_key.clone(), false),
        )
        .await?;
        if created.event.is_none() {
            return Err("a cache hit should settle at once".into());
        }
    });
    operation!("read: task by id", |i| {
        store::get_task(&client, APP, run_tasks[i]).await?.ok_or("the task just created is missing")?;
    });

    let mut leases = Vec::new();
    operation!("worker: claim", |i| {
        for id in [run_tasks[i], scoped_tasks[i]] {
            match store::claim_by(&client, &[id], &aitasks_testkit::claim_mark()).await?.pop() {
                Some(store::Claim::Claimed(task)) => leases.push(task.lease()),
                other => return Err(format!("claim of a queued task: {other:?}").into()),
            }
        }
    });
    operation!("worker: heartbeat", |i| {
        store::heartbeat(&client, leases[2 * i]).await?;
    });
    operation!("worker: cancel check", |i| {
        store::check(&client, leases[2 * i]).await?;
    });
    let output = json!({"label": "shipping", "confidence": 0.9});
    let usage = json!({"inputTokens": 100, "outputTokens": 5});
    operation!("worker: complete with its event", |i| {
        for lease in [leases[2 * i], leases[2 * i + 1]] {
            if store::complete_attempt(&client, lease, &output, Some(&usage), true).await?
                == store::Fenced::Lost
            {
                return Err("complete lost its lease".into());
            }
        }
    });

    // Tasks to fail, requeue and cancel.
    let mut spare = Vec::new();
    for _ in 0..3 * REPEATS {
        let created = store::create_task(&client, &new_task(TaskOwner::Run(run_id), key())).await?;
        spare.push(created.task().id);
    }
    let mut spare_leases = Vec::new();
    for &id in &spare[..2 * REPEATS] {
        if let Some(store::Claim::Claimed(task)) =
            store::claim_by(&client, &[id], &aitasks_testkit::claim_mark()).await?.pop()
        {
            spare_leases.push(task.lease());
        }
    }
    operation!("worker: fail", |i| {
        store::fail_attempt(
            &client,
            spare_leases[i],
            aitasks_contracts::ErrorCode::ProviderError,
            "The provider answered 400.",
        )
        .await?;
    });
    operation!("worker: requeue after a retryable error", |i| {
        store::requeue_attempt(
            &client,
            spare_leases[REPEATS + i],
            aitasks_contracts::ErrorCode::ProviderError,
            "The provider answered 503.",
        )
        .await?;
    });
    operation!("api: cancel a queued task", |i| {
        store::request_cancel(&client, APP, spare[2 * REPEATS + i]).await?.ok_or("no task to cancel")?;
    });
    let mut runs = Vec::new();
    operation!("api: create run", |_i| {
        let new = NewRun {
            app_id: APP.into(),
            scope_id: SCOPE.into(),
            actor: None,
            idempotency_key: Some(uuid::Uuid::new_v4().to_string()),
        };
        runs.push(store::create_run(&client, &new).await?.run().id);
    });
    operation!("api: get run", |i| {
        store::get_run(&client, APP, runs[i]).await?.ok_or("the run just created is missing")?;
    });
    for &run in &runs {
        for _ in 0..3 {
            store::create_task(&client, &new_task(TaskOwner::Run(run), key())).await?;
        }
    }
    operation!("api: cancel a run", |i| {
        let run = store::cancel_run(&client, APP, runs[i]).await?.ok_or("no run to cancel")?;
        store::cancel_run_tasks(&client, run.id, 500).await?;
        store::finish_run_cancel(&client, run.id).await?;
    });

    operation!("owned: release by effect key", |i| {
        if !store::release(&client, APP, SCOPE, &scoped_keys[i]).await? {
            return Err("release found no task".into());
        }
    });
    let mut after = None;
    operation!("owned: unreleased sources, next page", |_i| {
        let (_, next) = store::unreleased_sources(&client, APP, None, after.as_ref()).await?;
        after = next;
    });
    let mut after = None;
    operation!("owned: unreleased sources of one step, next page", |_i| {
        let (_, next) = store::unreleased_sources(&client, APP, Some("step-3"), after.as_ref()).await?;
        after = next;
    });
    // Other scopes of the same application each time the probe runs (a kept cluster is probed
    // again): scope-X07 for a random X, and its sources doc-0 .. doc-299.
    let scope_of = |n: u128| format!("scope-{}", (n % 90 + 10) * 100 + 7);
    let source_scope = scope_of(Uuid::new_v4().as_u128());
    let first_source = Uuid::new_v4().as_u128() % 290;
    operation!("owned: delete the data of a source", |i| {
        let source = format!("doc-{}", first_source + i as u128);
        delete_owned(&mut client, &source_scope, Some(&source)).await?;
    });
    let first_scope = Uuid::new_v4().as_u128();
    operation!("owned: delete the data of a scope", |i| {
        delete_owned(&mut client, &scope_of(first_scope + i as u128), None).await?;
    });

    let day = Duration::from_secs(24 * 60 * 60);
    operation!("sweeper: expire queued tasks", |_i| {
        store::expire_queued(&client, Duration::from_secs(900), 100).await?;
    });
    operation!("sweeper: expire stale running tasks", |_i| {
        let runtime = aitasks_runtime::RuntimeConfig::default();
        let stale = store::take_stale_running(&client, runtime.stale_running, 100).await?;
        let decided: Vec<_> = stale
            .iter()
            .filter_map(|attempt| {
                let (ending, _delay) = aitasks_runtime::sweeper::stale_ending(attempt, &runtime)?;
                Some((attempt.lease, ending))
            })
            .collect();
        store::expire_running(&client, runtime.stale_running, &decided).await?;
    });
    operation!("sweeper: re-send owed messages", |_i| {
        let owed = store::take_unsent(&client, Duration::from_secs(5), Duration::from_secs(300), 100).await?;
        let ids: Vec<Uuid> = owed.iter().map(|message| message.task_id).collect();
        store::mark_unsent(&client, &ids).await?;
    });
    operation!("sweeper: look for lost messages", |_i| {
        store::owed_beyond(&client, 1_000, Duration::from_secs(60)).await?;
    });
    operation!("sweeper: the backlog's sample", |_i| {
        store::backlog(&client, 100_000).await?;
    });
    operation!("sweeper: the nearest deferred window", |_i| {
        store::nearest_window(&client, Duration::from_secs(600)).await?;
    });
    operation!("sweeper: send deferred tasks due now", |_i| {
        store::send_due_now(&client, Duration::from_secs(600), 100).await?;
    });
    operation!("sweeper: deliver pending events", |_i| {
        let events = store::take_undelivered_events(&client, Duration::from_secs(60), 100).await?;
        let ids: Vec<i64> = events.iter().map(|event| event.id).collect();
        store::mark_delivered(&client, &ids).await?;
    });
    operation!("sweeper: prune delivered events", |_i| {
        store::prune_delivered_events(&client, day, 100).await?;
    });
    operation!("sweeper: prune admission history", |_i| {
        store::prune_admissions(&client, day, 100).await?;
    });
    operation!("sweeper: delete retained results", |_i| {
        store::delete_retained(&client, day, 100).await?;
    });
    operation!("create: a batch of 100", |_i| {
        let batch: Vec<NewTask> = (0..100).map(|_| new_task(TaskOwner::Run(run_id), key())).collect();
        store::create_tasks(&client, APP, &batch).await?;
    });
    let mut batches = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let batch: Vec<NewTask> = (0..10).map(|_| new_task(owned(), key())).collect();
        let created = store::create_tasks(&client, APP, &batch).await?;
        batches.push(created.into_iter().map(|c| c.map(|c| c.task().id)).collect::<Result<Vec<_>, _>>()?);
    }
    let mut leases = Vec::with_capacity(REPEATS);
    operation!("worker: claim a batch of 10", |i| {
        let claims = store::claim_by(&client, &batches[i], &aitasks_testkit::claim_mark()).await?;
        leases.push(
            claims
                .into_iter()
                .filter_map(|claim| match claim {
                    store::Claim::Claimed(task) => Some(task.lease()),
                    _ => None,
                })
                .collect::<Vec<_>>(),
        );
    });
    operation!("worker: complete a batch of 10 with events", |i| {
        let output = serde_json::json!("pos");
        let attempts: Vec<_> = leases[i].iter().map(|lease| (*lease, &output, None)).collect();
        store::complete_many(&client, &attempts, true).await?;
    });
    operation!("read: a page of a run's tasks", |_i| {
        store::list_tasks(
            &client,
            APP,
            &aitasks_contracts::ListTasks::first_page(aitasks_contracts::TaskFilter::Run(run_id)),
        )
        .await?;
    });
    operation!("read: a page of a scope's succeeded tasks", |_i| {
        let scope =
            aitasks_contracts::ListTasks::first_page(aitasks_contracts::TaskFilter::Scope(SCOPE.into()));
        let succeeded =
            aitasks_contracts::ListTasks { status: Some(aitasks_contracts::TaskStatus::Succeeded), ..scope };
        store::list_tasks(&client, APP, &succeeded).await?;
    });
    operation!("read: a run's progress (10,000 tasks counted)", |_i| {
        store::run_progress(&client, APP, run_id).await?;
    });
    // The activity the loader's tasks would have counted (the load itself runs without
    // triggers): a row a minute for the last day, per model, for every application, so that the
    // read's walk has other tenants' rows beside its own.
    client
        .batch_execute(
            "INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded) \
             SELECT 'app-' || lpad(a::text, 2, '0'), date_trunc('minute', now()) - m * interval '1 minute', \
                 1, 0, 'model-' || d, 700, 690 \
             FROM generate_series(0, 99) a, generate_series(3, 1439) m, generate_series(0, 1) d \
             ON CONFLICT DO NOTHING; \
             INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created, succeeded) \
             SELECT app_id, date_trunc('hour', starts_at, 'UTC'), 60, 0, model_id, sum(created), sum(succeeded) \
             FROM activity WHERE minutes = 1 GROUP BY 1, 2, 5 ON CONFLICT DO NOTHING; \
             INSERT INTO activity (app_id, starts_at, minutes, writer, model_id, created) \
             SELECT 'app-' || lpad(a::text, 2, '0'), date_trunc('minute', now()) - m * interval '1 minute', \
                 1, 1000 + w, 'model-0', 1 \
             FROM generate_series(0, 99) a, generate_series(0, 9) m, generate_series(1, 20) w \
             ON CONFLICT DO NOTHING; ANALYZE activity",
        )
        .await?;
    for (name, bucket) in
        [("read: the activity, a day by the minute", "60"), ("read: the activity, a day by the hour", "3600")]
    {
        operation!(name, |_i| {
            let query = aitasks_contracts::ActivityQuery { bucket: Some(bucket), from: None, to: None };
            let window = aitasks_contracts::ActivityWindow::parse(query, chrono::Utc::now())
                .map_err(|problems| format!("the activity window: {problems:?}"))?;
            store::activity(&client, APP, &window).await?;
        });
    }
    // 100 tenants × 20 connections × 10 minutes of rows not folded yet: 20,000, in pages.
    operation!("sweeper: fold activity (a page of 2,000)", |_i| {
        store::fold_activity(&client, 2_000).await?;
    });
    Ok(timings)
}

/// What `DELETE /v1/scopes/{scopeId}/tasks` does: pages of the API's size until one comes short
/// (the API also stops at its time limit and answers `more`; the probe's scopes are small).
async fn delete_owned(
    client: &mut store::Client,
    scope_id: &str,
    source_id: Option<&str>,
) -> Result<u64, Failure> {
    let mut deleted = 0;
    loop {
        let n =
            store::delete_owned_page(client, APP, scope_id, source_id, aitasks_testkit::DELETE_PAGE).await?;
        deleted += n;
        if n < aitasks_testkit::DELETE_PAGE as u64 {
            return Ok(deleted);
        }
    }
}
