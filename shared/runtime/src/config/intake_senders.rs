//! `AITASK_INTAKE_SENDERS`: which sender may create tasks of which tenant through the intake
//! queues. Comma-separated `<sender>=<appId>` pairs, one tenant per pair (a sender of several
//! tenants is listed once for each). `<sender>` is matched against the SQS `SenderId` of the
//! message, as SQS sets it from the credentials that sent it (a message cannot choose it):
//!
//! - a role's unique id (`AROA…`, `aws iam get-role --query Role.RoleId`) matches every session
//!   of the role (SQS reports `AROA…:<session name>`: a Step Functions state machine's role, a
//!   Lambda's execution role);
//! - anything else matches the `SenderId` exactly: an IAM user's id (`AIDA…`), an account id,
//!   one role session (`AROA…:<session name>`).
//!
//! Unset or empty: no sender acts as any tenant, so every intake message is refused
//! (`UNAUTHORIZED`). Being allowed to send to a queue is not enough: a sender creates tasks only
//! of the tenants listed for it here (and that its queue takes, `AITASK_INTAKE_TENANTS`).

use std::collections::HashMap;

use aitasks_contracts::AppId;

use super::ConfigError;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IntakeSenders(HashMap<String, Vec<AppId>>);

/// Why a message's sender may not act as the tenant it resolved to (the message is refused,
/// its token failed with `UNAUTHORIZED`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SenderRefusal {
    #[error("the message has no SenderId, so its sender cannot be checked")]
    Unknown,
    #[error("the sender {sender} may not create tasks of the tenant {app_id:?} (AITASK_INTAKE_SENDERS)")]
    NotAllowed { sender: String, app_id: String },
}

impl IntakeSenders {
    pub fn parse(text: &str) -> Result<IntakeSenders, ConfigError> {
        let mut senders: HashMap<String, Vec<AppId>> = HashMap::new();
        for pair in text.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
            let (sender, tenant) = pair.split_once('=').ok_or_else(|| {
                ConfigError(format!("AITASK_INTAKE_SENDERS: {pair:?} is not <sender id>=<appId>"))
            })?;
            let sender = sender.trim();
            if !is_sender_id(sender) {
                return Err(ConfigError(format!(
                    "AITASK_INTAKE_SENDERS: {sender:?} is not an SQS SenderId (a role's unique id AROA…, a user's AIDA…, an account id, or AROA…:session)"
                )));
            }
            let tenant = AppId::parse(tenant.trim()).ok_or_else(|| {
                ConfigError(format!("AITASK_INTAKE_SENDERS: {tenant:?} (sender {sender}) is not a tenant id"))
            })?;
            senders.entry(sender.to_owned()).or_default().push(tenant);
        }
        Ok(IntakeSenders(senders))
    }

    /// Whether the message's `sender_id` (its SQS `SenderId`) may create tasks of `tenant`.
    pub fn check(&self, sender_id: Option<&str>, tenant: &AppId) -> Result<(), SenderRefusal> {
        let sender = sender_id.filter(|id| !id.is_empty()).ok_or(SenderRefusal::Unknown)?;
        // A role's session is `AROA…:<session>`: the role's id alone names every session.
        let role = sender.split_once(':').map(|(role, _)| role);
        let listed = |key: &str| self.0.get(key).is_some_and(|tenants| tenants.contains(tenant));
        if listed(sender) || role.is_some_and(listed) {
            return Ok(());
        }
        Err(SenderRefusal::NotAllowed { sender: sender.to_owned(), app_id: tenant.as_str().to_owned() })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An SQS `SenderId` or its role part: letters and digits, then optionally `:` and a session
/// name (`[\w+=,.@-]`, as IAM allows).
fn is_sender_id(text: &str) -> bool {
    let (id, session) = match text.split_once(':') {
        Some((id, session)) => (id, Some(session)),
        None => (text, None),
    };
    let id_ok = (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric());
    let session_ok = session.is_none_or(|s| {
        (1..=128).contains(&s.len())
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_+=,.@-".contains(&b))
    });
    id_ok && session_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(id: &str) -> AppId {
        AppId::parse(id).unwrap()
    }

    #[test]
    fn a_sender_acts_only_as_the_tenants_listed_for_it() {
        let senders = IntakeSenders::parse(
            "AROAROLEACME=acme, AIDAUSERBOTH=acme,AIDAUSERBOTH=globex,AROAOTHER:one-session=globex",
        )
        .unwrap();
        assert_eq!(senders.check(Some("AROAROLEACME:execution-1"), &app("acme")), Ok(()), "any session");
        assert_eq!(senders.check(Some("AROAROLEACME"), &app("acme")), Ok(()));
        assert!(matches!(
            senders.check(Some("AROAROLEACME:execution-1"), &app("globex")),
            Err(SenderRefusal::NotAllowed { .. })
        ));
        assert_eq!(senders.check(Some("AIDAUSERBOTH"), &app("globex")), Ok(()));
        assert_eq!(senders.check(Some("AROAOTHER:one-session"), &app("globex")), Ok(()));
        assert!(
            senders.check(Some("AROAOTHER:another-session"), &app("globex")).is_err(),
            "that session only"
        );
        assert!(senders.check(Some("AIDASTRANGER"), &app("acme")).is_err());
        assert_eq!(senders.check(None, &app("acme")), Err(SenderRefusal::Unknown));
        assert_eq!(senders.check(Some(""), &app("acme")), Err(SenderRefusal::Unknown));
        // Prefixes are not roles: only the part before the session's colon is.
        assert!(senders.check(Some("AROAROLEACMEX:s"), &app("acme")).is_err());
    }

    #[test]
    fn nobody_is_a_tenant_by_default_and_bad_pairs_are_refused() {
        let empty = IntakeSenders::parse("").unwrap();
        assert!(empty.is_empty());
        assert!(empty.check(Some("AIDAANYONE"), &app("acme")).is_err());
        for bad in ["AROA1", "AROA1=", "=acme", "AROA 1=acme", "AROA1:=acme", "a:b:c=acme"] {
            assert!(IntakeSenders::parse(bad).is_err(), "{bad}");
        }
    }
}
