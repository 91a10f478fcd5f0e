//! `aitasks-dev-server token [APP]` (`make token`): a token for that tenant, signed with the
//! secret the dev server checks, and accepted by it; one signed with another secret is not.

use aitasks_testkit::{Api, Stack};

fn token(app: &str, secret: Option<&str>) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aitasks-dev-server"));
    command.env_remove("AITASK_DEV_JWT_SECRET").arg("token").arg(app);
    if let Some(secret) = secret {
        command.env("AITASK_DEV_JWT_SECRET", secret);
    }
    let output = command.output().expect("run the dev server");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn a_printed_token_is_accepted_as_its_tenant() {
    let stack = Stack::start().await;
    let api = Api::new(&stack.server.address, token("token-app", None));
    let (status, run) = api.post("/v1/runs", &serde_json::json!({"scopeId": "s"})).await;
    assert_eq!((status, run["appId"].as_str()), (201, Some("token-app")), "{run}");
    let stranger = Api::new(&stack.server.address, token("token-app", Some("another-secret")));
    let (status, answer) = stranger.get("/v1/runs").await;
    assert_eq!((status, answer["error"]["code"].as_str()), (401, Some("UNAUTHORIZED")), "{answer}");
}
