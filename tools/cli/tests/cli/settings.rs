//! Where the URL and the token come from: flags, then the environment, then the config file.

use aitasks_testkit::{dev_token, Stack};

use crate::{aitasks_with, scratch};

const APP: &str = "app-cli-settings";

#[tokio::test]
async fn flags_win_over_the_environment_which_wins_over_the_config_file() {
    let stack = Stack::start().await;
    let url = format!("http://{}", stack.server.address);
    let token = dev_token(APP);
    let dir = scratch("config");
    let good = dir.join("good.toml");
    std::fs::write(&good, format!("url = \"{url}\"\ntoken = \"{token}\"\n")).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "url = \"http://127.0.0.1:1\"\ntoken = \"not-a-token\"\n").unwrap();
    let list = ["list", "--scope", "s", "--json", "--tries", "1"];

    // The file alone; a token others can read is warned about.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", good.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.json()["count"], 0);
    assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", good.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.stderr, "", "no warning for a private file");
    // The environment over the file.
    let run = aitasks_with(
        &[("AITASKS_CONFIG", bad.to_str().unwrap()), ("AITASKS_URL", &url), ("AITASKS_TOKEN", &token)],
        &list,
    )
    .await
    .ok();
    assert_eq!(run.json()["count"], 0);
    // Flags over the environment.
    let mut args = vec!["--url", url.as_str(), "--token", token.as_str()];
    args.extend(list);
    let run =
        aitasks_with(&[("AITASKS_URL", "http://127.0.0.1:1"), ("AITASKS_TOKEN", "nope")], &args).await.ok();
    assert_eq!(run.json()["count"], 0);
    // The file's bad token, nothing overriding it: the API's 401.
    let run = aitasks_with(
        &[("AITASKS_URL", &url)],
        &["--config", bad.to_str().unwrap(), "list", "--scope", "s", "--json"],
    )
    .await;
    assert_eq!((run.code, run.json()["error"]["code"].as_str()), (1, Some("UNAUTHORIZED")));

    // The default file: $XDG_CONFIG_HOME/aitasks/config.toml.
    let xdg = dir.join("xdg");
    std::fs::create_dir_all(xdg.join("aitasks")).unwrap();
    std::fs::copy(&good, xdg.join("aitasks/config.toml")).unwrap();
    let run = aitasks_with(&[("XDG_CONFIG_HOME", xdg.to_str().unwrap())], &list).await.ok();
    assert_eq!(run.json()["count"], 0);

    // A config file that is not the documented one, or missing when named: exit 2.
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "urll = \"x\"\n").unwrap();
    let run = aitasks_with(&[("AITASKS_CONFIG", typo.to_str().unwrap())], &list).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("urll"), "{}", run.stderr);
    let run = aitasks_with(&[("AITASKS_CONFIG", dir.join("missing.toml").to_str().unwrap())], &list).await;
    assert_eq!(run.code, 2);
}
