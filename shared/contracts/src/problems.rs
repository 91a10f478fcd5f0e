//! Validation problems: every problem found, each with the JSON path it concerns.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::limits::{PROBLEMS_MAX, PROBLEM_PATH_MAX_CHARS};

/// A path into a JSON document, printed as `request.choices[2]` (`$` for the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    pub fn root() -> Path {
        Path(String::new())
    }

    pub fn key(&self, key: &str) -> Path {
        if self.0.is_empty() {
            Path(key.to_owned())
        } else {
            Path(format!("{}.{key}", self.0))
        }
    }

    pub fn index(&self, index: usize) -> Path {
        Path(format!("{}[{index}]", self.0))
    }

    pub fn as_str(&self) -> &str {
        if self.0.is_empty() {
            "$"
        } else {
            &self.0
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing wrong with a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Every problem found in a document (never empty when returned as an error), bounded where it
/// is collected: the first [`PROBLEMS_MAX`] are kept, in the order found, and the rest only
/// counted, so a megabyte of bad input costs a few kilobytes here and in the answer. A path
/// longer than [`PROBLEM_PATH_MAX_CHARS`] (it echoes a caller's key) is cut short, ending in `…`.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
pub struct Problems {
    listed: Vec<Problem>,
    more: usize,
}

impl Problems {
    pub fn new() -> Problems {
        Problems::default()
    }

    pub fn one(path: &Path, message: impl Into<String>) -> Problems {
        let mut problems = Problems::new();
        problems.add(path, message);
        problems
    }

    pub fn add(&mut self, path: &Path, message: impl Into<String>) {
        if self.listed.len() < PROBLEMS_MAX {
            self.listed.push(Problem { path: cut(path.as_str()), message: message.into() });
        } else {
            self.more += 1;
        }
    }

    /// Add a problem whose message is only made if it will be listed: past the first
    /// [`PROBLEMS_MAX`] a problem is only counted, so a message that costs something to write
    /// (one listing an `enum`'s values) costs nothing for the millionth offender.
    pub fn add_with(&mut self, path: &Path, message: impl FnOnce() -> String) {
        if self.listed.len() < PROBLEMS_MAX {
            self.listed.push(Problem { path: cut(path.as_str()), message: message() });
        } else {
            self.more += 1;
        }
    }

    /// Add a problem found by another parser (its path is already absolute).
    pub fn add_raw(&mut self, problem: Problem) {
        if self.listed.len() < PROBLEMS_MAX {
            self.listed.push(Problem { path: cut(&problem.path), message: problem.message });
        } else {
            self.more += 1;
        }
    }

    /// Add every problem another parser found, listed and counted.
    pub fn absorb(&mut self, other: Problems) {
        for problem in other.listed {
            self.add_raw(problem);
        }
        self.more += other.more;
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many problems were found, listed or not.
    pub fn len(&self) -> usize {
        self.listed.len() + self.more
    }

    /// How many problems were found beyond those listed.
    pub fn more(&self) -> usize {
        self.more
    }

    /// The problems listed, in the order found.
    pub fn listed(&self) -> &[Problem] {
        &self.listed
    }

    pub fn iter(&self) -> impl Iterator<Item = &Problem> {
        self.listed.iter()
    }

    pub fn paths(&self) -> Vec<&str> {
        self.listed.iter().map(|p| p.path.as_str()).collect()
    }

    /// `Ok(value)` when nothing was found, else these problems.
    pub fn into_result<T>(self, value: T) -> Result<T, Problems> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

/// A path of at most [`PROBLEM_PATH_MAX_CHARS`] characters, `…` ending one that was cut.
fn cut(path: &str) -> String {
    match path.char_indices().nth(PROBLEM_PATH_MAX_CHARS - 1) {
        Some((end, _)) if path.chars().count() > PROBLEM_PATH_MAX_CHARS => format!("{}…", &path[..end]),
        _ => path.to_owned(),
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.listed.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", problem.path, problem.message)?;
        }
        if self.more > 0 {
            write!(f, "; and {} more problems", self.more)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_is_cut_to_the_limit_and_a_short_one_is_kept() {
        let long = Path::root().key(&"é".repeat(PROBLEM_PATH_MAX_CHARS + 1));
        let problems = Problems::one(&long, "is not a known field");
        let path = &problems.listed()[0].path;
        assert_eq!(path.chars().count(), PROBLEM_PATH_MAX_CHARS);
        assert!(path.ends_with('…'));
        let exact = "k".repeat(PROBLEM_PATH_MAX_CHARS);
        assert_eq!(Problems::one(&Path::root().key(&exact), "m").paths(), [exact.as_str()]);
        assert_eq!(Problems::one(&Path::root(), "m").paths(), ["$"]);
    }

    #[test]
    fn absorbing_keeps_the_cap_and_the_count() {
        let mut inner = Problems::new();
        for i in 0..PROBLEMS_MAX + 5 {
            inner.add(&Path::root().index(i), "bad");
        }
        let mut outer = Problems::one(&Path::root().key("a"), "bad");
        outer.absorb(inner);
        assert_eq!((outer.listed().len(), outer.more(), outer.len()), (PROBLEMS_MAX, 6, PROBLEMS_MAX + 6));
    }
}
