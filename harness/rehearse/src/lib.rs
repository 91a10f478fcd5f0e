//! The deploy rehearsal: `template.yaml` deployed locally, function by function, exactly as
//! `sam deploy` would configure it, and every AWS call judged against the function's own IAM
//! policy.
//!
//! 1. The template goes through the SAM transform (aws-sam-translator, as `sam deploy`), and
//!    every parameter, condition and intrinsic function is resolved against a local stack:
//!    queues on the SQS-compatible server, secrets in moto's Secrets Manager (the database URL
//!    and the provider key come from secrets, as in AWS), a fresh Postgres database, a stub
//!    provider speaking the OpenAI wire format ([`Rehearsal::prepare`]).
//! 2. Each function's release binary runs under a local Lambda Runtime API with the environment
//!    the stack gives it and its role's own credentials ([`function_process`]).
//! 3. Every SQS and Secrets Manager call goes through [`aws_proxy`], which records it and judges
//!    it against the caller's resolved policy statements ([`iam`]); a call no statement allows
//!    is refused as AWS would refuse it, and fails the rehearsal. So does every S3 and Bedrock
//!    control-plane call of Bedrock batch inference ([`rest_apis`]: the batch bucket's objects,
//!    the jobs, the service role passed), S3 going on to moto's and Bedrock's to
//!    [`aitasks_testkit::BedrockBatchStub`] (signed again with its credentials). So do the callbacks' calls
//!    (Step Functions task tokens, Lambda durable callbacks) and the bus's `PutEvents`, which
//!    the proxy answers itself once allowed ([`callback_apis`]).
//! 4. Before anything runs, [`preconditions`] refuses what AWS itself would refuse when
//!    CloudFormation creates the stack (an event source mapping's queue hiding messages for less
//!    than the function's timeout, batch sizes and windows out of range), and [`promises`] what
//!    the stack owes its operators (a dead-letter queue with an alarm for every queue a function
//!    consumes, every alarm the documentation names).
//! 5. [`scenario`] drives every trigger: the migrations custom resource, every HTTP route
//!    through the JWT authorizer's event shape, the SQS event source mapping, the schedule.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod aws_proxy;
pub mod callback_apis;
pub mod deployment;
pub mod events;
pub mod function_process;
pub mod iam;
pub mod local_aws;
pub mod preconditions;
pub mod promises;
pub mod report;
pub mod rest_apis;
pub mod scenario;
pub mod xray_daemon;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::aws_proxy::AwsProxy;
use crate::deployment::{Deployment, Function};
use crate::function_process::{FunctionProcess, RoleCredentials};
use crate::local_aws::{rds_secret, LocalQueue, Queues, ResponseBucket, SecretsManager, REGION};

pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// What to rehearse, and with what.
#[derive(Debug, Clone)]
pub struct Options {
    /// The repository root (for `harness/rehearse/resolve.py`).
    pub root: PathBuf,
    pub template: PathBuf,
    /// Where cargo-lambda put the binaries: `<dir>/<binary>/bootstrap`.
    pub lambda_dir: PathBuf,
    /// The tools virtualenv's `bin` (python with aws-sam-translator, moto_server).
    pub tools_bin: PathBuf,
    /// Parameter values over the local set.
    pub parameters: BTreeMap<String, String>,
    /// Function logs go here, one file per function.
    pub log_dir: PathBuf,
}

impl Options {
    /// The defaults for this checkout: `template.yaml`, the cargo-lambda output under the cargo
    /// target folder, the tools from `scripts/tools.sh`.
    pub fn for_checkout(root: &Path) -> Result<Options, Failure> {
        let root = &root.canonicalize()?;
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        let tools_bin = match std::env::var_os("AITASK_TOOLS_BIN") {
            Some(bin) => PathBuf::from(bin),
            None => {
                let out = std::process::Command::new(root.join("scripts/tools.sh")).output()?;
                if !out.status.success() {
                    return Err(
                        format!("scripts/tools.sh failed: {}", String::from_utf8_lossy(&out.stderr)).into()
                    );
                }
                PathBuf::from(String::from_utf8(out.stdout)?.trim())
            }
        };
        Ok(Options {
            root: root.to_owned(),
            template: root.join("template.yaml"),
            lambda_dir: std::env::var_os("AITASK_LAMBDA_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| target.join("lambda")),
            tools_bin,
            parameters: BTreeMap::new(),
            log_dir: target.join("rehearsal"),
        })
    }
}

/// The secrets the parameters name.
#[derive(Debug, Clone)]
pub struct LocalSecrets {
    pub database_arn: String,
    pub owner_arn: String,
    pub provider_key_arn: String,
    pub provider_key: String,
    /// The default profile's own key (`apiKeySecretArn` in ModelsJson): what the provider sees.
    pub profile_key_arn: String,
    pub profile_key: String,
    /// The default profile's credential header (`secretHeaders` in ModelsJson), from a JSON
    /// `{"value"}` secret: what the provider sees in [`PROFILE_HEADER`].
    pub profile_header_arn: String,
    pub profile_header: String,
}

/// The header the rehearsal's default profile sends from a secret.
pub const PROFILE_HEADER: &str = "x-rehearsal-token";

/// What the workflow parameters name (CallbackStateMachineArns, CallbackFunctionArns,
/// EventBusName): the scenario's callbacks belong to these, and its events go to this bus.
#[derive(Debug, Clone)]
pub struct Workflows {
    pub state_machine_arn: String,
    pub durable_function_arn: String,
    pub event_bus: String,
}

impl Workflows {
    fn local() -> Workflows {
        let account = events::ACCOUNT;
        Workflows {
            state_machine_arn: format!("arn:aws:states:{REGION}:{account}:stateMachine:rehearsal-classify"),
            durable_function_arn: format!("arn:aws:lambda:{REGION}:{account}:function:rehearsal-durable:1"),
            event_bus: "rehearsal-workflows".to_owned(),
        }
    }
}

/// The Bedrock model the rehearsal's `BatchBedrockModelArns` names: the sweeper may start batch
/// inference jobs on it and on no other.
pub const BATCH_MODEL_ARN: &str = "arn:aws:bedrock:us-east-1::foundation-model/rehearsal.batch-model-v1:0";

/// The profile in the rehearsal's ModelsJson that batches deferred tasks through Bedrock batch
/// inference on [`BATCH_MODEL_ARN`] (one record is a batch, formed after a second's wait).
pub const BATCH_PROFILE: &str = "rehearsal-batch";
/// The SenderId the SQS-compatible server (fauxqs) gives every message: the intake queue's
/// sender for the scenario's tenant (`IntakeSenders`).
pub const LOCAL_SENDER_ID: &str = "000000000000";

/// A local stack, ready for the functions to run against.
pub struct Rehearsal {
    pub options: Options,
    /// The template as written (before the transform and its conditions).
    pub template: Value,
    pub deployment: Deployment,
    pub proxy: AwsProxy,
    pub secrets: LocalSecrets,
    pub workflows: Workflows,
    pub secrets_manager: SecretsManager,
    pub queues: BTreeMap<String, LocalQueue>,
    /// The template's S3 buckets, by logical id: their names in moto's S3.
    pub buckets: BTreeMap<String, String>,
    pub sqs: Queues,
    pub stub: aitasks_testkit::StubProvider,
    /// Bedrock's batch-inference control plane (its records in moto's S3), behind the proxy.
    pub bedrock: aitasks_testkit::BedrockBatchStub,
    pub bucket: ResponseBucket,
    pub database: String,
    pub stack_id: String,
    /// Where functions with active tracing send their segments.
    pub xray: xray_daemon::XrayDaemon,
    credentials: BTreeMap<String, RoleCredentials>,
}

impl Rehearsal {
    /// Create the local resources, resolve the template against them, and register each
    /// function's role with the proxy.
    pub async fn prepare(options: Options) -> Result<Rehearsal, Failure> {
        std::fs::create_dir_all(&options.log_dir)?;
        let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        let secrets_manager =
            SecretsManager::start(&options.tools_bin, &options.log_dir.join(format!("moto-{run}.log")))
                .await?;

        // A fresh, empty database: the migrations custom resource creates the schema.
        let owner_url = aitasks_testkit::base_url();
        let app_url = aitasks_testkit::app_base_url();
        let database = format!("aitasks_rehearsal_{run}");
        aitasks_testkit::admin(&aitasks_testkit::with_database(&owner_url, "postgres"))
            .await
            .batch_execute(&format!("CREATE DATABASE {database}"))
            .await?;
        let provider_key = format!("sk-rehearsal-{}", uuid::Uuid::new_v4().simple());
        let profile_key = format!("sk-profile-{}", uuid::Uuid::new_v4().simple());
        let profile_header = format!("hv-profile-{}", uuid::Uuid::new_v4().simple());
        let secrets = LocalSecrets {
            database_arn: secrets_manager
                .create(&format!("aitasks/{run}/database"), &rds_secret(&app_url, &database)?)
                .await?,
            owner_arn: secrets_manager
                .create(&format!("aitasks/{run}/owner"), &rds_secret(&owner_url, &database)?)
                .await?,
            provider_key_arn: secrets_manager
                .create(&format!("aitasks/{run}/provider-key"), &provider_key)
                .await?,
            provider_key,
            profile_key_arn: secrets_manager
                .create(&format!("aitasks/{run}/profile-key"), &json!({"apiKey": profile_key}).to_string())
                .await?,
            profile_key,
            profile_header_arn: secrets_manager
                .create(
                    &format!("aitasks/{run}/profile-header"),
                    &json!({"value": profile_header}).to_string(),
                )
                .await?,
            profile_header,
        };

        let sqs_endpoint = aitasks_testkit::local_env("AWS_ENDPOINT_URL_SQS");
        let sqs = Queues::connect(&sqs_endpoint).await;
        let proxy =
            AwsProxy::start(&sqs_endpoint, &secrets_manager.endpoint, REGION, events::ACCOUNT).await?;
        let stub = aitasks_testkit::StubProvider::start().await;
        // The proxy signs the Bedrock calls it allows again, with the stub's own credentials.
        let bedrock = aitasks_testkit::BedrockBatchStub::start(&secrets_manager.endpoint).await;
        proxy.set_bedrock(
            &bedrock.endpoint,
            aitasks_testkit::BATCH_AWS_ACCESS_KEY,
            aitasks_testkit::BATCH_AWS_SECRET_KEY,
        );
        let bucket = ResponseBucket::start().await?;

        // The queues the template declares, by logical id (read from the template itself).
        let template: Value = {
            let text = std::fs::read_to_string(&options.template)?;
            serde_yaml::from_str(&text)?
        };
        let mut queues = BTreeMap::new();
        let mut buckets = BTreeMap::new();
        let mut local_resources = serde_json::Map::new();
        for (logical_id, resource) in template["Resources"].as_object().into_iter().flatten() {
            if resource["Type"] == "AWS::SQS::Queue" {
                let queue = sqs.create(&format!("r{run}-{logical_id}")).await?;
                proxy.add_queue(&queue.name, &queue.arn);
                local_resources.insert(
                    logical_id.clone(),
                    json!({"Ref": queue.url, "Arn": queue.arn, "QueueName": queue.name, "QueueUrl": queue.url}),
                );
                queues.insert(logical_id.clone(), queue);
            }
            if resource["Type"] == "AWS::S3::Bucket" {
                let name = format!("r{run}-{logical_id}").to_lowercase();
                local_aws::create_bucket(&secrets_manager.endpoint, &name).await?;
                local_resources.insert(
                    logical_id.clone(),
                    json!({"Ref": name, "Arn": format!("arn:aws:s3:::{name}"),
                           "DomainName": format!("{name}.s3.amazonaws.com")}),
                );
                buckets.insert(logical_id.clone(), name);
            }
        }

        let workflows = Workflows::local();
        let mut parameters: BTreeMap<String, String> = [
            ("JwtIssuer", "https://issuer.rehearsal.example/".to_owned()),
            ("JwtAudience", "aitasks-rehearsal".to_owned()),
            ("DatabaseSecretArn", secrets.database_arn.clone()),
            ("DatabaseOwnerSecretArn", secrets.owner_arn.clone()),
            ("ProviderKeySecretArn", secrets.provider_key_arn.clone()),
            ("OpenAiBaseUrl", stub.base_url.clone()),
            // The default profile reads its key and a credential header from secrets of its
            // own, which only process-task's policy (ProfileKeySecretArns) lets it read.
            (
                "ModelsJson",
                json!({"default": {"model": "rehearsal-model", "baseUrl": stub.base_url,
                                   "apiKeySecretArn": secrets.profile_key_arn,
                                   "secretHeaders": {PROFILE_HEADER: secrets.profile_header_arn}},
                       BATCH_PROFILE: {"provider": "bedrock", "model": BATCH_MODEL_ARN,
                                       "batch": {"enabled": true, "minRecords": 1, "maxWaitSeconds": 1}}})
                .to_string(),
            ),
            ("ProfileKeySecretArns", format!("{},{}", secrets.profile_key_arn, secrets.profile_header_arn)),
            ("DefaultModel", "rehearsal-model".to_owned()),
            ("SubnetIds", "subnet-0rehearsal".to_owned()),
            ("SecurityGroupIds", "sg-0rehearsal".to_owned()),
            // Callbacks to one state machine and one durable function, events on a bus, and
            // the intake queue for the scenario's tenant: every new call is judged too.
            ("CallbackStateMachineArns", workflows.state_machine_arn.clone()),
            ("CallbackFunctionArns", workflows.durable_function_arn.clone()),
            ("EventBusName", workflows.event_bus.clone()),
            ("IntakeAppIds", scenario::TENANT.to_owned()),
            // The SQS-compatible server reports every message's SenderId as the account id.
            ("IntakeSenders", format!("{LOCAL_SENDER_ID}={}", scenario::TENANT)),
            // Bedrock batch inference on one model: the batch bucket, its service role, the
            // sweeper's S3, Bedrock and PassRole grants, the job-state rule.
            ("BatchBedrockModelArns", BATCH_MODEL_ARN.to_owned()),
            // The web console's function and its two routes without the authorizer.
            ("Console", "Enabled".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        // The local cluster's certificates come from its own CA: the parameter a direct RDS
        // connection would set to the RDS CA bundle.
        if let Some(ca) = aitasks_testkit::try_local_env("AITASK_DB_CA_FILE") {
            parameters.insert("DatabaseCaFile".into(), ca);
        }
        parameters.extend(options.parameters.clone());
        let declared = template["Parameters"].as_object().cloned().unwrap_or_default();
        parameters.retain(|name, _| declared.contains_key(name));

        let stack_name = format!("aitasks-rehearsal-{run}");
        let local_stack = json!({
            "region": REGION,
            "accountId": events::ACCOUNT,
            "stackName": stack_name,
            "parameters": parameters,
            "resources": local_resources,
        });
        let python = options.tools_bin.join("python");
        let resolved = deployment::resolve(&python, &options.root, &options.template, &local_stack)?;
        let deployment = Deployment::from_resolved(resolved)?;
        for spec in &deployment.queues {
            if let Some(queue) = queues.get(&spec.logical_id) {
                sqs.configure(queue, &spec.attributes).await?;
            }
        }
        let mut credentials = BTreeMap::new();
        for (index, (logical_id, function)) in deployment.functions.iter().enumerate() {
            let role = RoleCredentials::for_function(index, logical_id);
            proxy.register(&role.access_key, logical_id, &function.role_arn, function.statements.clone());
            credentials.insert(logical_id.clone(), role);
        }
        let stack_id =
            format!("arn:aws:cloudformation:{REGION}:{}:stack/{stack_name}/{run}", events::ACCOUNT);
        Ok(Rehearsal {
            options,
            template,
            deployment,
            proxy,
            secrets,
            workflows,
            secrets_manager,
            queues,
            buckets,
            sqs,
            stub,
            bedrock,
            bucket,
            database,
            stack_id,
            xray: xray_daemon::XrayDaemon::start()?,
            credentials,
        })
    }

    pub fn function(&self, logical_id: &str) -> Result<&Function, Failure> {
        self.deployment
            .functions
            .get(logical_id)
            .ok_or_else(|| format!("the stack has no function {logical_id}").into())
    }

    /// The role credentials of a function (for the event source mapping, which polls with them).
    pub fn credentials(&self, logical_id: &str) -> Result<&RoleCredentials, Failure> {
        self.credentials.get(logical_id).ok_or_else(|| format!("no credentials for {logical_id}").into())
    }

    /// Start a function's process with exactly its deployed environment.
    pub async fn start(&self, logical_id: &str) -> Result<FunctionProcess, Failure> {
        self.start_with(logical_id, &BTreeMap::new()).await
    }

    /// [`Rehearsal::start`] with some variables changed (for tests of failure paths only).
    pub async fn start_with(
        &self,
        logical_id: &str,
        changes: &BTreeMap<String, Option<String>>,
    ) -> Result<FunctionProcess, Failure> {
        let function = self.function(logical_id)?;
        let binary = self.options.lambda_dir.join(&function.binary).join("bootstrap");
        let mut endpoints: BTreeMap<String, String> = [
            ("AWS_ENDPOINT_URL_SQS".to_owned(), self.proxy.endpoint.clone()),
            ("AWS_ENDPOINT_URL_SECRETS_MANAGER".to_owned(), self.proxy.endpoint.clone()),
            ("AWS_ENDPOINT_URL_SFN".to_owned(), self.proxy.endpoint.clone()),
            ("AWS_ENDPOINT_URL_EVENTBRIDGE".to_owned(), self.proxy.endpoint.clone()),
            ("AWS_ENDPOINT_URL_LAMBDA".to_owned(), self.proxy.endpoint.clone()),
            // Bedrock batch inference: the batch bucket's objects (path-style) and the control
            // plane, both judged by the proxy.
            ("AWS_ENDPOINT_URL_S3".to_owned(), self.proxy.endpoint.clone()),
            ("AWS_ENDPOINT_URL_BEDROCK".to_owned(), self.proxy.endpoint.clone()),
        ]
        .into();
        // Lambda runs the X-Ray daemon for a function with active tracing; here it listens on a
        // loopback port of the rehearsal's own.
        if function.tracing.as_deref() == Some("Active") {
            endpoints.insert("AWS_XRAY_DAEMON_ADDRESS".to_owned(), self.xray.address.clone());
        }
        let mut environment = function.environment.clone();
        for (name, value) in changes {
            match value {
                Some(value) => environment.insert(name.clone(), value.clone()),
                None => environment.remove(name),
            };
        }
        self.proxy.set_phase(logical_id, "cold start");
        let log = self.options.log_dir.join(format!("{}-{logical_id}.log", &self.database[18..]));
        FunctionProcess::start(
            function,
            &binary,
            &environment,
            self.credentials(logical_id)?,
            &endpoints,
            log,
        )
        .await
    }

    /// An SQS client with a function's role credentials, through the proxy (what the event
    /// source mapping uses to poll and delete on the function's behalf).
    pub async fn sqs_as(&self, logical_id: &str) -> Result<aws_sdk_sqs::Client, Failure> {
        let role = self.credentials(logical_id)?;
        let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .http_client(aitasks_runtime::aws::https_client())
            .region(aws_sdk_sqs::config::Region::new(REGION))
            .endpoint_url(&self.proxy.endpoint)
            .credentials_provider(aws_sdk_sqs::config::Credentials::new(
                role.access_key.clone(),
                role.secret_key.clone(),
                Some(role.session_token.clone()),
                None,
                "rehearsal",
            ))
            .load()
            .await;
        Ok(aws_sdk_sqs::Client::new(&config))
    }

    /// Drop the rehearsal's database.
    pub async fn cleanup(&self) {
        let admin =
            aitasks_testkit::admin(&aitasks_testkit::with_database(&aitasks_testkit::base_url(), "postgres"))
                .await;
        let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database)).await;
    }
}
