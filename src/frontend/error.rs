//! Front-end diagnostics: always a position in the user's file, what is
//! wrong, and what to do about it.

use crate::frontend::scop::ast::Span;
use std::fmt;
use std::path::{Path, PathBuf};

/// A problem at a place in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
    /// A function the user may declare pure to have the SCoP taken (the
    /// command line names the option that does).
    pub pure: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// Why a file could not be turned into SCoPs.
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Source(Diagnostic),
}

impl FrontendError {
    /// The diagnostic, when the error has a source position.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            FrontendError::Source(d) => Some(d),
            FrontendError::Io { .. } => None,
        }
    }
}

/// An error located by a byte span, before it is turned into line:column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpanError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    /// See [`Diagnostic::pure`].
    pub pure: Option<String>,
}

impl SpanError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> SpanError {
        SpanError {
            span,
            message: message.into(),
            help: None,
            pure: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> SpanError {
        self.help = Some(help.into());
        self
    }

    /// The error goes away if the user declares `function` pure.
    pub(crate) fn pure(mut self, function: &str) -> SpanError {
        self.pure = Some(function.to_string());
        self
    }
}

/// Where the lines of a text start, so that a byte offset becomes a line
/// and column in O(log lines) (plus the length of a non-ASCII line): a
/// file with 100,000 statements on one line gets 100,000 positions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lines {
    starts: Vec<usize>,
    /// Whether each line is ASCII, so its columns are byte offsets.
    ascii: Vec<bool>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let ascii = starts
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let end = starts.get(k + 1).copied().unwrap_or(text.len());
                text.as_bytes()[s..end].is_ascii()
            })
            .collect();
        Lines { starts, ascii }
    }

    /// 1-based line and column (columns count characters) of `offset` in
    /// `text`, the text these lines were made from.
    pub(crate) fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        if self.ascii[line] {
            return (line + 1, offset - start + 1);
        }
        let mut end = offset;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let col = text[start..end].chars().count() + 1;
        (line + 1, col)
    }
}

/// Byte offset to 1-based line and column (columns count characters).
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    lines: Lines,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        LineIndex {
            text,
            lines: Lines::new(text),
        }
    }

    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        self.lines.line_col(self.text, offset)
    }

    pub(crate) fn diagnostic(&self, path: &Path, e: SpanError) -> FrontendError {
        let at = self.line_col(e.span.start);
        self.diagnostic_at(path, e, at)
    }

    /// The diagnostic of `e` at `(line, column)`, which the caller found.
    pub(crate) fn diagnostic_at(
        &self,
        path: &Path,
        e: SpanError,
        (line, column): (usize, usize),
    ) -> FrontendError {
        FrontendError::Source(Diagnostic {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message,
            help: e.help,
            pure: e.pure,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let idx = LineIndex::new("ab\ncdé\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(2), (1, 3));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(7), (2, 4));
        assert_eq!(idx.line_col(8), (3, 1));
        assert_eq!(idx.line_col(100), (3, 2));
        let idx = LineIndex::new("é\nab");
        assert_eq!(idx.line_col(1), (1, 1));
        assert_eq!(idx.line_col(2), (1, 2));
        assert_eq!(idx.line_col(4), (2, 2));
    }
}
