//! The identifiers callers hand us, parsed once at the edge into types that cannot hold an
//! invalid value: the tenant (the verified `app_id` claim), task and run ids, effect keys, a run
//! create's idempotency key.

use std::fmt;

use uuid::Uuid;

use crate::limits::EFFECT_KEY_MAX_CHARS;

/// Characters of a tenant id (the application claim).
pub const APP_ID_MAX_CHARS: usize = 200;

fn plain_text(text: &str, max_chars: usize) -> bool {
    let length = text.chars().count();
    (1..=max_chars).contains(&length) && !text.contains('\0')
}

/// The tenant: the application named by the verified token's claim. Every read and write is
/// scoped to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AppId(String);

impl AppId {
    /// 1..=200 characters without NUL, or nothing.
    pub fn parse(text: &str) -> Option<AppId> {
        plain_text(text, APP_ID_MAX_CHARS).then(|| AppId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A caller's idempotency key for a create: one task per `(app, effect key)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EffectKey(String);

impl EffectKey {
    /// 1..=500 characters without NUL, or nothing.
    pub fn parse(text: &str) -> Option<EffectKey> {
        plain_text(text, EFFECT_KEY_MAX_CHARS).then(|| EffectKey(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// Characters of an `Idempotency-Key`.
pub const IDEMPOTENCY_KEY_MAX_CHARS: usize = 255;

/// The key a client sends with a run create (`Idempotency-Key`): one run per `(app, key)`, so a
/// create sent again after a lost answer finds the run it made. The same rule as openapi.yaml's
/// pattern: 1..=255 visible ASCII characters (`!` to `~`), no spaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The header's bytes as sent, or nothing when they are not a key.
    pub fn parse(value: &[u8]) -> Option<IdempotencyKey> {
        let visible = value.iter().all(|byte| (b'!'..=b'~').contains(byte));
        let fits = (1..=IDEMPOTENCY_KEY_MAX_CHARS).contains(&value.len());
        // Visible ASCII is UTF-8, one byte a character.
        (visible && fits).then(|| IdempotencyKey(String::from_utf8_lossy(value).into_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(Uuid);

        impl $name {
            /// A UUID, or nothing (an id that is not one names nothing).
            pub fn parse(text: &str) -> Option<$name> {
                Uuid::parse_str(text).ok().map($name)
            }

            pub fn uuid(self) -> Uuid {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

uuid_id!(
    /// A task's id.
    TaskId
);
uuid_id!(
    /// A run's id.
    RunId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_valid_values_parse() {
        assert_eq!(AppId::parse("app-1").map(|a| a.to_string()), Some("app-1".into()));
        for bad in ["", "a\0b"] {
            assert!(AppId::parse(bad).is_none(), "{bad:?}");
            assert!(EffectKey::parse(bad).is_none(), "{bad:?}");
        }
        assert!(AppId::parse(&"a".repeat(201)).is_none());
        assert!(EffectKey::parse(&"é".repeat(500)).is_some(), "characters, not bytes");
        assert!(EffectKey::parse(&"k".repeat(501)).is_none());
        assert!(IdempotencyKey::parse(b"01936f3e-4b2a-7c3d-8e4f-5a6b7c8d9e0f").is_some());
        assert!(IdempotencyKey::parse("k".repeat(255).as_bytes()).is_some());
        for bad in [&b""[..], b" ", b"a b", b"tab\there", "é".as_bytes(), b"a\0b", "k".repeat(256).as_bytes()]
        {
            assert!(IdempotencyKey::parse(bad).is_none(), "{bad:?}");
        }
        let id = Uuid::now_v7();
        assert_eq!(TaskId::parse(&id.to_string()).map(TaskId::uuid), Some(id));
        assert!(RunId::parse("not-a-uuid").is_none());
    }
}
