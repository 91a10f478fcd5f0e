//! `AITASK_TENANT_QUOTAS`: server-side quotas per tenant, from configuration. JSON
//! `{"<appId>": {"tasksPerDay": N}, "*": {"tasksPerDay": N}}`; `*` is every tenant not named.
//! Unset, or a tenant matched by neither: no quota.

use std::collections::HashMap;

use serde::Deserialize;

use super::ConfigError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TenantQuota {
    /// New tasks per UTC day, scoped or not (an existing effect key is not new).
    pub tasks_per_day: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TenantQuotas(HashMap<String, TenantQuota>);

impl TenantQuotas {
    pub fn parse(text: &str) -> Result<TenantQuotas, ConfigError> {
        let quotas: HashMap<String, TenantQuota> = serde_json::from_str(text)
            .map_err(|e| ConfigError(format!("AITASK_TENANT_QUOTAS is not valid: {e}")))?;
        if let Some((tenant, _)) = quotas.iter().find(|(_, quota)| quota.tasks_per_day < 1) {
            return Err(ConfigError(format!(
                "AITASK_TENANT_QUOTAS: {tenant}'s tasksPerDay must be at least 1"
            )));
        }
        Ok(TenantQuotas(quotas))
    }

    /// The quota of new tasks per day for this tenant, if any.
    pub fn tasks_per_day(&self, tenant: &str) -> Option<i64> {
        self.0.get(tenant).or_else(|| self.0.get("*")).map(|quota| quota.tasks_per_day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_tenant_wins_over_the_default_and_bad_quotas_are_refused() {
        let quotas = TenantQuotas::parse(r#"{"*": {"tasksPerDay": 3}, "big": {"tasksPerDay": 10}}"#).unwrap();
        assert_eq!(quotas.tasks_per_day("big"), Some(10));
        assert_eq!(quotas.tasks_per_day("small"), Some(3));
        let named_only = TenantQuotas::parse(r#"{"big": {"tasksPerDay": 10}}"#).unwrap();
        assert_eq!(named_only.tasks_per_day("small"), None);
        assert!(TenantQuotas::parse(r#"{"*": {"tasksPerDay": 0}}"#).is_err());
        assert!(TenantQuotas::parse(r#"{"*": {"tasks": 3}}"#).is_err());
        assert!(TenantQuotas::parse("[]").is_err());
    }
}
