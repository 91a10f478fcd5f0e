//! Times given on the command line.

use chrono::{DateTime, Utc};

use crate::failure::Failure;

/// An RFC 3339 flag value, or a usage failure naming the flag.
pub(crate) fn instant(flag: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, Failure> {
    text.map(|text| {
        DateTime::parse_from_rfc3339(text).map(|at| at.with_timezone(&Utc)).map_err(|_| {
            Failure::Input(format!("{flag} {text}: an RFC 3339 time, such as 2026-01-31T12:00:00Z"))
        })
    })
    .transpose()
}
