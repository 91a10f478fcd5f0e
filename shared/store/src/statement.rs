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
        folded(&parse(self.source).text)
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

    /// The file's own text as Postgres would get it, its fragments not spliced in, on one line
    /// ([`folded`]).
    #[cfg(test)]
    pub(crate) fn written(&self) -> String {
        folded(&parse(self.source).text)
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
/// statement (the test `every_statement_is_spliced_whole` catches it first).
fn splice(source: &str, fragments: &[Fragment]) -> String {
    let mut text = source.to_owned();
    for fragment in fragments {
        let marker = fragment.marker();
        if text.contains(&marker) {
            text = text.replace(&marker, &spliced(fragment.source));
        }
    }
    text
}

/// A fragment as it goes in: followed by a line break when its last line ends in a comment, so the
/// comment cannot swallow what follows, and by a space otherwise, so a fragment used inside a line
/// stays on it and never runs into the token after its marker (the parser drops the space before
/// a comma or a closing parenthesis).
fn spliced(source: &str) -> String {
    let source = source.trim_end();
    match source.lines().last() {
        Some(last) if last.contains("--") => format!("{source}\n"),
        _ => format!("{source} "),
    }
}

/// Drop `--` comments, turn `:name` into `$n` (the same name, the same number), leave string
/// literals, quoted identifiers and `::` casts alone, and keep the layout otherwise: a line break
/// with the next line's indentation where the source breaks a line (a comment's line and blank
/// lines go), one space for any other run of whitespace. So what Postgres gets, and what
/// `pg_stat_statements` and the statement snapshot show, reads as the file does.
fn parse(source: &str) -> Parsed {
    let mut text = String::with_capacity(source.len());
    let mut names: Vec<String> = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let mut gap = Gap::None;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '-' if chars.get(i + 1) == Some(&'-') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                gap = gap.widened(Gap::Space);
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
                gap.push(&mut text, &literal);
                i += 1;
            }
            ':' if chars.get(i + 1) == Some(&':') => {
                gap.push(&mut text, "::");
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
                gap.push(&mut text, &format!("${position}"));
            }
            c if c.is_whitespace() => {
                let start = i;
                while i < chars.len() && chars[i].is_whitespace() {
                    i += 1;
                }
                let run = &chars[start..i];
                gap = gap.widened(match run.iter().rposition(|c| *c == '\n') {
                    Some(last) => Gap::Line(run.len() - last - 1),
                    None => Gap::Space,
                });
            }
            c => {
                gap.push(&mut text, &c.to_string());
                i += 1;
            }
        }
    }
    Parsed { text, names }
}

/// What stands between two pieces of a statement: nothing, a space, or a line break with the
/// next line's indentation.
#[derive(Clone, Copy)]
enum Gap {
    None,
    Space,
    Line(usize),
}

impl Gap {
    /// The gap after one more run of whitespace or a comment: a line break wins over a space,
    /// and the later line's indentation over an earlier one's.
    fn widened(self, next: Gap) -> Gap {
        match (self, next) {
            (_, Gap::Line(indent)) | (Gap::Line(indent), _) => Gap::Line(indent),
            _ => Gap::Space,
        }
    }

    /// Write the gap, then `piece`. Nothing goes before the first piece, and a space does not
    /// go after an opening parenthesis or before a closing one or a comma.
    fn push(&mut self, text: &mut String, piece: &str) {
        match *self {
            _ if text.is_empty() => {}
            Gap::Line(indent) => {
                text.push('\n');
                text.extend(std::iter::repeat_n(' ', indent));
            }
            Gap::Space if !text.ends_with('(') && !piece.starts_with([')', ',']) => text.push(' '),
            _ => {}
        }
        *self = Gap::None;
        text.push_str(piece);
    }
}

/// `text` on one line, every run of whitespace one space: for tests that look for a phrase
/// whatever the lines it is written over.
#[cfg(test)]
pub(crate) fn folded(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,", ",")
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
        assert_eq!(sql.text(), "SELECT ':kept', \"odd\"\"name\", $1::text,\n  ($2)\n  FROM t WHERE id = $1");
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
        assert_eq!(
            sql.text(),
            "SELECT\nx + $1\n AS sum,\nx + $1",
            "the lines of the fragment, its comments gone"
        );
        assert_eq!(sql.names(), ["task_id"]);
        assert_eq!(sql.includes(), ["fragments/sum"]);
        let glued = Sql::new("example", "SELECT {{fragments/other}}FROM t, {{fragments/other}}", FRAGMENTS);
        assert_eq!(glued.text(), "SELECT y FROM t, y", "a fragment never runs into the token after it");
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
