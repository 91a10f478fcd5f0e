//! `AITASK_INTAKE_TENANTS`: whose tasks each intake queue takes. JSON
//! `{"<queue name>": ["<appId>", ...]}`: a queue shared by producers of different tenants lists
//! each, and a message names its tenant (`appId`); a queue of one tenant needs no `appId`. A
//! queue not listed takes nothing. Being allowed to send to a queue is not enough to act as its
//! tenants: the message's sender must be listed for the tenant too (`AITASK_INTAKE_SENDERS`,
//! [`super::intake_senders`]).

use std::collections::HashMap;

use aitasks_contracts::AppId;

use super::ConfigError;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IntakeTenants(HashMap<String, Vec<AppId>>);

/// Why a message's tenant is not one its queue takes (the message is refused, its token failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TenantRefusal {
    #[error("the queue {0} takes no tenant's tasks (AITASK_INTAKE_TENANTS does not name it)")]
    UnknownQueue(String),
    #[error("appId is required: the queue {0} takes tasks of several tenants")]
    AppIdRequired(String),
    #[error("the queue {queue} does not take tasks of the tenant {app_id:?}")]
    NotAllowed { queue: String, app_id: String },
}

impl IntakeTenants {
    pub fn parse(text: &str) -> Result<IntakeTenants, ConfigError> {
        let queues: HashMap<String, Vec<String>> = serde_json::from_str(text).map_err(|e| {
            ConfigError(format!("AITASK_INTAKE_TENANTS must map queue names to lists of tenants: {e}"))
        })?;
        let mut parsed = HashMap::new();
        for (queue, tenants) in queues {
            if tenants.is_empty() {
                return Err(ConfigError(format!("AITASK_INTAKE_TENANTS: the queue {queue} lists no tenant")));
            }
            let tenants = tenants
                .iter()
                .map(|tenant| {
                    AppId::parse(tenant).ok_or_else(|| {
                        ConfigError(format!(
                            "AITASK_INTAKE_TENANTS: {tenant:?} (queue {queue}) is not a tenant id"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            parsed.insert(queue, tenants);
        }
        Ok(IntakeTenants(parsed))
    }

    /// The tenant of a message from `queue` that names `app_id` (or none).
    pub fn tenant(&self, queue: &str, app_id: Option<&str>) -> Result<AppId, TenantRefusal> {
        let tenants = self.0.get(queue).ok_or_else(|| TenantRefusal::UnknownQueue(queue.to_owned()))?;
        match (app_id, tenants.as_slice()) {
            (None, [only]) => Ok(only.clone()),
            (None, _) => Err(TenantRefusal::AppIdRequired(queue.to_owned())),
            (Some(named), _) => {
                tenants.iter().find(|tenant| tenant.as_str() == named).cloned().ok_or_else(|| {
                    TenantRefusal::NotAllowed { queue: queue.to_owned(), app_id: named.to_owned() }
                })
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_of_one_tenant_needs_no_app_id_and_a_shared_one_names_it() {
        let tenants = IntakeTenants::parse(r#"{"intake": ["acme"], "shared": ["acme", "globex"]}"#).unwrap();
        assert_eq!(tenants.tenant("intake", None).unwrap().as_str(), "acme");
        assert_eq!(tenants.tenant("intake", Some("acme")).unwrap().as_str(), "acme");
        assert!(matches!(tenants.tenant("intake", Some("globex")), Err(TenantRefusal::NotAllowed { .. })));
        assert_eq!(tenants.tenant("shared", Some("globex")).unwrap().as_str(), "globex");
        assert_eq!(tenants.tenant("shared", None), Err(TenantRefusal::AppIdRequired("shared".into())));
        assert_eq!(tenants.tenant("other", None), Err(TenantRefusal::UnknownQueue("other".into())));
        for bad in [r#"{"q": []}"#, r#"{"q": [""]}"#, r#"{"q": "acme"}"#, "[]", "nope"] {
            assert!(IntakeTenants::parse(bad).is_err(), "{bad}");
        }
    }
}
