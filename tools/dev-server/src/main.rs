//! The aitasks dev server: every function of the stack behind one local process, invoked the
//! way AWS invokes them.
//!
//! - HTTP on `AITASK_LOCAL_ADDR` (127.0.0.1:9000), answered only for a loopback `Host` or one
//!   `AITASK_LOCAL_HOSTS` lists (DNS rebinding: hosts.rs): each request is checked like the HTTP
//!   API's JWT authorizer would (HS256 with `AITASK_DEV_JWT_SECRET`), turned into an API Gateway
//!   v2 event and handed to `create-task` or `release-delete`.
//! - `AITASK_LOCAL_POLLERS` (2) SQS pollers feed `process-task` as the event source mapping does
//!   (0: none, the tasks stay queued); with `AITASK_LOCAL_INTAKE_QUEUE_URL`, one more feeds
//!   `intake-task` from that intake queue.
//! - The sweeper runs every `AITASK_SWEEP_INTERVAL_MS` (60000).
//! - The web console at `/console` (its files need no token; it calls the API with the user's).
//!
//! Migrations are applied at start, as `AITASK_MIGRATE_DATABASE_URL` (the schema owner) when
//! set, else as `DATABASE_URL`. `aitasks-dev-server migrate` only migrates;
//! `aitasks-dev-server stats` prints the live figures (`make stats`); `aitasks-dev-server token
//! [APP]` prints a token for tenant APP (default `my-app`) signed with the secret it checks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auth;
mod console;
mod exposure;
mod gateway;
mod hosts;
mod invocation;
mod poller;
mod stats;
mod token;

use std::sync::Arc;
use std::time::Duration;

use aitasks_runtime::App;
use lambda_runtime::{Context, LambdaEvent};

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_owned())
}

fn millis(name: &str, default: u64) -> Result<Duration, Failure> {
    let text = env_or(name, &default.to_string());
    Ok(Duration::from_millis(
        text.parse().map_err(|_| format!("{name} must be a whole number of milliseconds"))?,
    ))
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    aitasks_lambda_kit::init_tracing();
    if std::env::args().nth(1).as_deref() == Some("stats") {
        // A look at a running stack: no migration, no listening.
        return stats::print(&*App::from_env().await?).await;
    }
    let address = env_or("AITASK_LOCAL_ADDR", "127.0.0.1:9000");
    let secret = env_or("AITASK_DEV_JWT_SECRET", exposure::DEFAULT_SECRET);
    if std::env::args().nth(1).as_deref() == Some("token") {
        let app = std::env::args().nth(2).unwrap_or_else(|| "my-app".to_owned());
        println!("{}", token::sign(&secret, &app)?);
        return Ok(());
    }
    let migrate_only = std::env::args().nth(1).as_deref() == Some("migrate");
    let hosts = hosts::Hosts::parse(&env_or("AITASK_LOCAL_HOSTS", ""))?;
    if !migrate_only {
        // Before anything starts: a refusal here leaves nothing half-running.
        exposure::check(&address, &secret, &hosts).await?;
    }
    // Migrations need the schema owner; the functions' own role may only touch rows.
    let database_url = std::env::var("AITASK_MIGRATE_DATABASE_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .map_err(|_| "DATABASE_URL is required (run `make up`)")?;
    let applied =
        aitasks_store::migrate(&database_url).await.map_err(|e| aitasks_lambda_kit::error_chain(&e))?;
    if !applied.is_empty() {
        tracing::info!(?applied, "migrations applied");
    }
    if migrate_only {
        return Ok(());
    }

    let app = App::from_env().await?;
    let pollers: usize =
        env_or("AITASK_LOCAL_POLLERS", "2").parse().map_err(|_| "AITASK_LOCAL_POLLERS must be a number")?;
    let function_timeout = millis("AITASK_LOCAL_FUNCTION_TIMEOUT_MS", 300_000)?;
    // The runtime reads it too: the heartbeat duty ends its window inside the period.
    let sweep_every = app.settings.runtime.sweep_interval;
    let wait_seconds: i32 = env_or("AITASK_LOCAL_POLL_WAIT_S", "10")
        .parse()
        .map_err(|_| "AITASK_LOCAL_POLL_WAIT_S must be a number")?;

    // A local SQS-compatible server keeps its messages in memory: if it restarted, every
    // queued task's message is gone. Send them again now, before taking work, rather than after
    // AITASK_RESEND_AFTER_MS.
    match aitasks_runtime::sweeper::restore_lost_messages(&app, Duration::ZERO).await {
        Ok(restored) if restored.resent > 0 => {
            tracing::info!(?restored, "re-sent the messages the queue lost")
        }
        Ok(_) => {}
        Err(error) => {
            tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not look for lost messages")
        }
    }

    // Nor, then, a message behind an event a worker handed over to a publish it died before:
    // the events of the last two function timeouts go back to the outbox (those published
    // already go out again; delivery is at least once).
    match aitasks_runtime::sweeper::hand_back_recent_events(&app, function_timeout * 2).await {
        Ok(0) => {}
        Ok(handed_back) => {
            tracing::info!(handed_back, "gave the recently handed-over events back to the sweeper")
        }
        Err(error) => {
            tracing::warn!(error = %aitasks_runtime::error_chain(&error), "could not give the handed-over events back")
        }
    }

    let mut background = tokio::task::JoinSet::new();
    let mut sources = vec![poller::Source::Tasks; pollers];
    if let Ok(url) = std::env::var("AITASK_LOCAL_INTAKE_QUEUE_URL") {
        sources.push(poller::Source::Intake { url });
    }
    for source in sources {
        let poller = poller::Poller {
            app: app.clone(),
            function_timeout,
            wait_seconds: wait_seconds.clamp(0, 20),
            source,
        };
        background.spawn(poller.run());
    }
    let sweep_app = app.clone();
    // The tasks a killed dev server left running are the sweeper's once their heartbeat is
    // stale: one sweep then, not a whole interval later. Then the EventBridge-like schedule.
    let first_sweep = app.settings.runtime.stale_running + Duration::from_secs(1);
    background.spawn(async move {
        let sweep = || async {
            if let Err(error) =
                sweeper::handle(&sweep_app, LambdaEvent::new(serde_json::json!({}), Context::default())).await
            {
                tracing::warn!(error = %aitasks_runtime::error_chain(error.as_ref()), "sweep failed");
            }
        };
        // The schedule starts a sweep every period from the first one's start, as EventBridge
        // does, whatever a sweep's length (a 45 s sweep is followed 15 s later, not 60 s later).
        let mut next = tokio::time::Instant::now() + sweep_every;
        if first_sweep < sweep_every {
            tokio::time::sleep(first_sweep).await;
            next = tokio::time::Instant::now() + sweep_every;
            sweep().await;
        }
        let mut every = tokio::time::interval_at(next, sweep_every);
        loop {
            every.tick().await;
            sweep().await;
        }
    });

    let gateway = Arc::new(gateway::Gateway { app, authorizer: auth::DevAuthorizer::new(&secret)?, hosts });
    let router = axum::Router::new().fallback(gateway::handle).with_state(gateway);
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    tracing::info!(%address, pollers, sweep_every_ms = sweep_every.as_millis() as u64, "dev server ready");
    axum::serve(listener, router).with_graceful_shutdown(shutdown()).await?;
    background.shutdown().await;
    Ok(())
}

async fn shutdown() {
    let terminate = async {
        if let Ok(mut signal) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            signal.recv().await;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
    tracing::info!("shutting down");
}
