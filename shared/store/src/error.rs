use tokio_postgres::error::SqlState;

/// Everything the store can report. Callers map these to HTTP answers or retry decisions once,
/// at the edge.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The run does not exist for this application.
    #[error("run not found")]
    RunNotFound,
    /// The run was canceled: no new task may join it.
    #[error("the run is canceled")]
    RunUnavailable,
    /// The request, as stored by Postgres (`jsonb` text), is over the limit.
    #[error("the request is larger than {max} bytes as stored", max = crate::REQUEST_MAX_BYTES)]
    RequestTooLarge,
    /// A row broke a constraint that input validation should have caught first.
    #[error("the data breaks the constraint {constraint} (SQLSTATE {})", sqlstate_code(.source))]
    Constraint {
        constraint: String,
        #[source]
        source: tokio_postgres::Error,
    },
    /// Admission refused a scoped task; nothing was stored.
    #[error("admission refused: {0}")]
    Admission(#[from] crate::model::AdmissionRefusal),
    /// The database could not be reached (pool timeout, closed connection, refused connect).
    #[error("the database is unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A row held a value the store does not understand (a bug or a foreign writer).
    #[error("unexpected row: {0}")]
    Corrupt(String),
    /// Any other database error; its SQLSTATE in the message, the driver's words in the source.
    #[error("database error{}", sqlstate(.0))]
    Database(#[source] tokio_postgres::Error),
    /// The configuration cannot work: a malformed `DATABASE_URL`, an unreadable CA file. Not
    /// retried: nothing changes until the configuration does.
    #[error("configuration: {0}")]
    Config(String),
    /// Applying the migrations failed; the source says why (the driver's error and its SQLSTATE).
    #[error("migration failed")]
    Migration(#[source] refinery::Error),
}

fn sqlstate_code(error: &tokio_postgres::Error) -> &str {
    error.code().map(|code| code.code()).unwrap_or("?")
}

impl StoreError {
    /// True when the failure says nothing about the data, only that Postgres was not there:
    /// the caller may answer 503 or retry later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable(_))
    }

    /// True when the same statement may pass if tried again: Postgres was not there, or it
    /// rolled the statement back for a conflict with another (SQLSTATE class 40: a deadlock, a
    /// serialization failure).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Unavailable(_) => true,
            StoreError::Database(error) => error.code().is_some_and(|code| code.code().starts_with("40")),
            _ => false,
        }
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        if let Some(db) = error.as_db_error() {
            if *db.code() == SqlState::CHECK_VIOLATION {
                let constraint = db.constraint().unwrap_or_default().to_owned();
                if constraint == "tasks_request_size_check" {
                    return StoreError::RequestTooLarge;
                }
                return StoreError::Constraint { constraint, source: error };
            }
            let class = &db.code().code()[..2];
            // 28: the login was refused (wrong user or password: 28P01, 28000); 3D000: no such
            // database. Nothing a retry can mend: the DATABASE_URL or its secret is wrong.
            if class == "28" || *db.code() == SqlState::INVALID_CATALOG_NAME {
                return StoreError::Config(format!(
                    "the database refused the connection: {} (SQLSTATE {}); check DATABASE_URL or the \
                     database secret",
                    db.message(),
                    db.code().code()
                ));
            }
            // 08: connection exception, 57P: operator intervention (shutdown, crash recovery),
            // 57014: the statement timeout (migrations/V9) ended a statement that waited too long.
            if class == "08" || db.code().code().starts_with("57P") || *db.code() == SqlState::QUERY_CANCELED
            {
                return StoreError::Unavailable(Box::new(error));
            }
            return StoreError::Database(error);
        }
        if error.is_closed() || std::error::Error::source(&error).is_some_and(|s| s.is::<std::io::Error>()) {
            return StoreError::Unavailable(Box::new(error));
        }
        StoreError::Database(error)
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match error {
            deadpool_postgres::PoolError::Backend(e) => StoreError::from(e),
            other => StoreError::Unavailable(Box::new(other)),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// ` (SQLSTATE 23505)` for an error the server reported; nothing otherwise.
fn sqlstate(error: &tokio_postgres::Error) -> String {
    error.as_db_error().map(|db| format!(" (SQLSTATE {})", db.code().code())).unwrap_or_default()
}
