//! The identifiers callers hand us, parsed once at the edge into types that cannot hold an
//! invalid value: the tenant (the verified `app_id` claim), task and run ids, effect keys.

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
        let id = Uuid::now_v7();
        assert_eq!(TaskId::parse(&id.to_string()).map(TaskId::uuid), Some(id));
        assert!(RunId::parse("not-a-uuid").is_none());
    }
}
