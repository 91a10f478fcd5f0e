//! V38 over the data of a deployment before it: a task running in a provider batch then kept its
//! lease in `heartbeat_at`. The migration moves it to `batch_lease_until` (the check V38 adds
//! would refuse the old row), and V39 validates the check over the rows already there.

use aitasks_store as store;
use aitasks_testkit::*;
use uuid::Uuid;

#[tokio::test]
async fn v38_moves_a_running_batch_tasks_lease_out_of_its_heartbeat() {
    let base = base_url();
    let admin_client = admin(&with_database(&base, "postgres")).await;
    let name = format!("aitasks_v37_{}", Uuid::new_v4().simple());
    admin_client.batch_execute(&format!("CREATE DATABASE {name}")).await.unwrap();
    let url = with_database(&base, &name);
    store::migrate_until(&url, ca_file().as_deref(), 37).await.unwrap();

    let (batch, running, plain) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let owner = admin(&url).await;
    owner
        .batch_execute(&format!(
            "INSERT INTO task_batches (id, profile, provider, records, give_up_at) \
                 VALUES ('{batch}', 'default', 'openai', 1, now() + interval '1 hour');
             INSERT INTO tasks (id, app_id, scope_id, usage_subject, step_key, effect_key, kind,
                     request, input_hash, model_id, status, attempts, max_attempts, heartbeat_at,
                     started_at, batch_id)
                 VALUES ('{running}', 'app', 's', '{{}}', 'a', 'a', 'classify', '{{}}', repeat('a', 64), 'default',
                     'running', 1, 3, now() + interval '90 minutes', now(), '{batch}'),
                        ('{plain}', 'app', 's', '{{}}', 'b', 'b', 'classify', '{{}}', repeat('a', 64), 'default',
                     'running', 1, 3, now(), now(), NULL);"
        ))
        .await
        .unwrap();

    let applied = store::migrate_with(&url, ca_file().as_deref()).await.unwrap();
    assert!(applied.contains(&38) && applied.contains(&39), "applied {applied:?}");
    let row = owner
        .query_one(
            &format!(
                "SELECT heartbeat_at IS NULL, batch_lease_until > now() + interval '80 minutes' \
                 FROM tasks WHERE id = '{running}'"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!((row.get::<_, bool>(0), row.get::<_, bool>(1)), (true, true), "the lease moved");
    let row = owner
        .query_one(
            &format!(
                "SELECT heartbeat_at IS NOT NULL, batch_lease_until IS NULL FROM tasks WHERE id = '{plain}'"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (row.get::<_, bool>(0), row.get::<_, bool>(1)),
        (true, true),
        "an on-demand task keeps its heartbeat"
    );
    let valid: bool = owner
        .query_one("SELECT convalidated FROM pg_constraint WHERE conname = 'tasks_running_holder_check'", &[])
        .await
        .unwrap()
        .get(0);
    assert!(valid, "V39 validated the check over the rows already there");
    drop(owner);
    admin_client.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();
}
