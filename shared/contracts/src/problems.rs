//! Validation problems: every problem found, each with the JSON path it concerns.

use std::fmt;

use serde::Serialize;

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Every problem found in a document (never empty when returned as an error).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(transparent)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn new() -> Problems {
        Problems(Vec::new())
    }

    pub fn one(path: &Path, message: impl Into<String>) -> Problems {
        let mut problems = Problems::new();
        problems.add(path, message);
        problems
    }

    pub fn add(&mut self, path: &Path, message: impl Into<String>) {
        self.0.push(Problem { path: path.as_str().to_owned(), message: message.into() });
    }

    /// Add a problem found by another parser (its path is already absolute).
    pub fn add_raw(&mut self, problem: Problem) {
        self.0.push(problem);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Problem> {
        self.0.iter()
    }

    pub fn paths(&self) -> Vec<&str> {
        self.0.iter().map(|p| p.path.as_str()).collect()
    }

    /// `Ok(value)` when nothing was found, else these problems.
    pub fn into_result<T>(self, value: T) -> Result<T, Problems> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", problem.path, problem.message)?;
        }
        Ok(())
    }
}
