//! Variables renamed so that each word keeps one meaning (*batch* is a provider batch, a page
//! of rows is a page, a delivery's messages are records). Each old name is still read, for one
//! release, when its new name is unset; both set to different values is refused rather than
//! one of them silently winning. docs/configuration.md, "Old names", lists them.

use super::ConfigError;

/// `(new name, old name)`.
pub const RENAMED: &[(&str, &str)] = &[
    ("AITASK_RECORD_CONCURRENCY", "AITASK_BATCH_CONCURRENCY"),
    ("AITASK_SWEEP_PAGE", "AITASK_SWEEP_BATCH"),
    ("AITASK_SWEEP_MAX_PAGES", "AITASK_SWEEP_MAX_BATCHES"),
    ("AITASK_REQUEST_PAGE", "AITASK_REQUEST_BATCH"),
    ("AITASK_APP_TOKEN_FIELD", "AITASK_APP_CLAIM"),
];

/// `name`'s value, or its old name's when only that is set.
pub fn read(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).or_else(|| RENAMED.iter().find(|(new, _)| *new == name).and_then(|(_, old)| lookup(old)))
}

/// Refuses a variable set under both its names with two different values.
pub fn refuse_conflicts(lookup: &impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
    for (new, old) in RENAMED {
        if let (Some(current), Some(previous)) = (lookup(new), lookup(old)) {
            if current.trim() != previous.trim() {
                return Err(ConfigError(format!(
                    "{new} is {current:?} but its old name {old} is {previous:?}: set only {new}"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn an_old_name_is_read_when_the_new_one_is_unset() {
        let lookup = env(&[("AITASK_SWEEP_BATCH", "7")]);
        assert_eq!(read(&lookup, "AITASK_SWEEP_PAGE").as_deref(), Some("7"));
        assert_eq!(read(&lookup, "AITASK_SWEEP_BATCH").as_deref(), Some("7"));
        assert_eq!(read(&lookup, "AITASK_MAX_ATTEMPTS"), None);
    }

    #[test]
    fn the_new_name_wins_and_two_different_values_are_refused() {
        let same = env(&[("AITASK_APP_TOKEN_FIELD", "tenant"), ("AITASK_APP_CLAIM", "tenant")]);
        assert_eq!(read(&same, "AITASK_APP_TOKEN_FIELD").as_deref(), Some("tenant"));
        assert!(refuse_conflicts(&same).is_ok());
        let different = env(&[("AITASK_REQUEST_PAGE", "10"), ("AITASK_REQUEST_BATCH", "20")]);
        let refused = refuse_conflicts(&different).unwrap_err().0;
        assert!(
            refused.contains("AITASK_REQUEST_PAGE") && refused.contains("AITASK_REQUEST_BATCH"),
            "{refused}"
        );
    }
}
