//! The one way an error and its causes become text, for a log line or an operator-facing message
//! (the edge's error logs, the migrate function's answer to CloudFormation, the worker's
//! warnings), and a panic's payload too.

/// An error and every cause under it: `migration failed: error asserting migrations table:
/// db error: ERROR: permission denied for schema public`. Passwords in connection strings are
/// masked.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some errors repeat their source in their own message; say each thing once.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    aitasks_store::redact(&text)
}

/// The message of a panic payload (`panic!` gives a `&str` or a `String`).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn every_cause_is_named_once_and_passwords_are_masked() {
        let error = Outer(std::io::Error::other("connecting to postgres://app:s3cret@db/x refused"));
        assert_eq!(error_chain(&error), "outer: connecting to postgres://app:***@db/x refused");
    }
}
