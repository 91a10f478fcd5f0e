//! One SQL statement, written out in its own file under `shared/store/sql/`, with named
//! parameters (`:task_id`). Postgres takes positional ones (`$1`), so the text is converted once
//! and the values are bound by name: a call site says which value is `:task_id`, never which
//! number it is. `shared/store/tests/snapshots/` shows every final statement.
//!
//! A piece several statements share (the completion event's payload, the admission bookkeeping
//! of a task that ends, a whole task's columns) is written once, in `sql/fragments/<name>.sql`,
//! and a statement names it where it goes: `{{fragments/<name>}}` (a fragment may name one
//! listed after it). The text is spliced in when the statement is first
//! used, so Postgres gets the statement written out in full, as if by hand: it costs nothing at
//! run time (a SQL function would be a call per row, or a plan the planner may not inline).

use std::sync::OnceLock;

use tokio_postgres::types::ToSql;

use crate::error::{StoreError, StoreResult};

/// A value for a named parameter.
pub(crate) type Param<'a> = (&'static str, &'a (dyn ToSql + Sync));

/// A statement from `sql/<name>.sql`.
pub(crate) struct Sql {
    pub(crate) name: &'static str,
    source: &'static str,
    /// The fragments its `{{fragments/<name>}}` may name; a fragment may name those after it.
    fragments: &'static [Fragment],
    parsed: OnceLock<Parsed>,
}

/// A piece of SQL several statements share, from `sql/fragments/<name>.sql`.
pub(crate) struct Fragment {
    /// `fragments/<name>`, as a statement names it.
    pub(crate) name: &'static str,
    pub(crate) source: &'static str,
}

impl Fragment {
    /// How a statement names it: `{{fragments/<name>}}`.
    pub(crate) fn marker(&self) -> String {
        format!("{{{{{}}}}}", self.name)
    }

    /// Its text as it is spliced in, comments dropped and whitespace folded.
    #[cfg(test)]
    pub(crate) fn written(&self) -> String {
        parse(self.source).text
    }
}

struct Parsed {
    /// The text Postgres gets: comments dropped, `:name` → `$n`.
    text: String,
    /// Parameter names in `$n` order.
    names: Vec<String>,
}

impl Sql {
    pub(crate) const fn new(name: &'static str, source: &'static str, fragments: &'static [Fragment]) -> Sql {
        Sql { name, source, fragments, parsed: OnceLock::new() }
    }

    fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| parse(&splice(self.source, self.fragments)))
    }

    /// The fragments the statement's file names, and those they name, in the order of the list.
    #[cfg(test)]
    pub(crate) fn includes(&self) -> Vec<&'static str> {
        let mut named: Vec<&Fragment> = Vec::new();
        for fragment in self.fragments {
            let marker = fragment.marker();
            if self.source.contains(&marker) || named.iter().any(|by| by.source.contains(&marker)) {
                named.push(fragment);
            }
        }
        named.iter().map(|f| f.name).collect()
    }

    /// The file's own text as Postgres would get it, its fragments not spliced in.
    #[cfg(test)]
    pub(crate) fn written(&self) -> String {
        parse(self.source).text
    }

    /// The file as it is.
    #[cfg(test)]
    pub(crate) fn source(&self) -> &'static str {
        self.source
    }

    /// The statement as Postgres gets it.
    pub(crate) fn text(&self) -> &str {
        &self.parsed().text
    }

    /// The parameter names, in `$1`, `$2`, ... order.
    pub(crate) fn names(&self) -> &[String] {
        &self.parsed().names
    }

    /// The values in `$n` order. Every name the statement uses must be given, and nothing else.
    pub(crate) fn bind<'a>(&self, values: &[Param<'a>]) -> StoreResult<Vec<&'a (dyn ToSql + Sync)>> {
        let names = self.names();
        if let Some((extra, _)) = values.iter().find(|(name, _)| !names.iter().any(|n| n == name)) {
            return Err(StoreError::Corrupt(format!(
                "statement {}: it has no parameter :{extra}",
                self.name
            )));
        }
        names
            .iter()
            .map(|name| {
                values.iter().find(|(given, _)| given == name).map(|(_, value)| *value).ok_or_else(|| {
                    StoreError::Corrupt(format!("statement {}: no value for :{name}", self.name))
                })
            })
            .collect()
    }
}

/// The source with each `{{fragments/<name>}}` replaced by that fragment, in the order of the
/// list: a fragment may name only fragments after it, which are then spliced into it in the same
/// pass. A name that is no fragment (or one before it) stays as it is, and Postgres refuses the
/// statement (the test `every_statement_is_spliced_whole` catches it first). The fragment ends with a line break, so
/// a comment on its last line cannot swallow what follows.
fn splice(source: &str, fragments: &[Fragment]) -> String {
    let mut text = source.to_owned();
    for fragment in fragments {
        let marker = fragment.marker();
        if text.contains(&marker) {
            text = text.replace(&marker, &format!("{}\n", fragment.source.trim_end()));
        }
    }
    text
}

/// Drop `--` comments, turn `:name` into `$n` (the same name, the same number), leave string
/// literals, quoted identifiers and `::` casts alone, and fold whitespace.
fn parse(source: &str) -> Parsed {
    let mut text = String::with_capacity(source.len());
    let mut names: Vec<String> = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut pending_space = false;
    // A folded space goes in, except after an opening parenthesis and before a closing one or
    // a comma.
    let push = |text: &mut String, piece: &str, pending: &mut bool| {
        if *pending && !text.is_empty() && !text.ends_with('(') && !piece.starts_with([')', ',']) {
            text.push(' ');
        }
        *pending = false;
        text.push_str(piece);
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '-' if chars.get(i + 1) == Some(&'-') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                pending_space = true;
            }
            '\'' | '"' => {
                let start = i;
                i += 1;
                while i < chars.len() {
                    if chars[i] == c {
                        // A doubled quote is an escaped one.
                        if chars.get(i + 1) == Some(&c) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                let literal: String = chars[start..=i.min(chars.len() - 1)].iter().collect();
                push(&mut text, &literal, &mut pending_space);
                i += 1;
            }
            ':' if chars.get(i + 1) == Some(&':') => {
                push(&mut text, "::", &mut pending_space);
                i += 2;
            }
            ':' if chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase() || *n == '_') => {
                let start = i + 1;
                i = start;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let position = match names.iter().position(|n| *n == name) {
                    Some(position) => position + 1,
                    None => {
                        names.push(name);
                        names.len()
                    }
                };
                push(&mut text, &format!("${position}"), &mut pending_space);
            }
            c if c.is_whitespace() => {
                pending_space = true;
                i += 1;
            }
            c => {
                push(&mut text, &c.to_string(), &mut pending_space);
                i += 1;
            }
        }
    }
    Parsed { text, names }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_positions_and_the_rest_stays() {
        let sql = Sql::new(
            "example",
            "-- a comment with :not_a_param\nSELECT ':kept', \"odd\"\"name\", :task_id::text,\n  ( :attempt ) -- trailing\n  FROM t WHERE id = :task_id",
            &[],
        );
        assert_eq!(sql.text(), "SELECT ':kept', \"odd\"\"name\", $1::text, ($2) FROM t WHERE id = $1");
        assert_eq!(sql.names(), ["task_id", "attempt"]);
        let (id, attempt) = (7_i64, 2_i32);
        assert_eq!(sql.bind(&[("attempt", &attempt), ("task_id", &id)]).unwrap().len(), 2);
        assert!(sql.bind(&[("task_id", &id)]).is_err(), "a missing value is refused");
        assert!(
            sql.bind(&[("task_id", &id), ("attempt", &attempt), ("other", &id)]).is_err(),
            "and an unknown one"
        );
    }

    #[test]
    fn a_fragment_is_spliced_where_it_is_named() {
        static FRAGMENTS: &[Fragment] = &[
            Fragment { name: "fragments/sum", source: "-- a sum\nx + :task_id -- ends here" },
            Fragment { name: "fragments/other", source: "y" },
        ];
        static BACKWARDS: &[Fragment] = &[
            Fragment { name: "fragments/twice", source: "y" },
            Fragment { name: "fragments/other", source: "({{fragments/twice}}) * 2" },
        ];
        static TWICE: &[Fragment] = &[
            Fragment { name: "fragments/twice", source: "({{fragments/other}}) * 2" },
            Fragment { name: "fragments/other", source: "y" },
        ];
        let sql = Sql::new("example", "SELECT {{fragments/sum}} AS sum, {{fragments/sum}}", FRAGMENTS);
        assert_eq!(sql.text(), "SELECT x + $1 AS sum, x + $1");
        assert_eq!(sql.names(), ["task_id"]);
        assert_eq!(sql.includes(), ["fragments/sum"]);
        let nested = Sql::new("example", "SELECT {{fragments/twice}}", TWICE);
        assert_eq!(nested.text(), "SELECT (y) * 2", "a fragment names one after it");
        assert_eq!(nested.includes(), ["fragments/twice", "fragments/other"]);
        let backwards = Sql::new("example", "SELECT {{fragments/other}}", BACKWARDS);
        assert_eq!(
            backwards.text(),
            "SELECT ({{fragments/twice}}) * 2",
            "a fragment naming one before it is left for the tests to find"
        );
        let unknown = Sql::new("example", "SELECT {{fragments/none}}", FRAGMENTS);
        assert_eq!(
            unknown.text(),
            "SELECT {{fragments/none}}",
            "an unknown name is left for the tests to find"
        );
    }
}
