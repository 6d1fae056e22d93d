//! Front-end diagnostics: always a position in the user's file, what is
//! wrong, and what to do about it.

use crate::scop::ast::Span;
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
pub struct SpanError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

impl SpanError {
    pub fn new(span: Span, message: impl Into<String>) -> SpanError {
        SpanError {
            span,
            message: message.into(),
            help: None,
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> SpanError {
        self.help = Some(help.into());
        self
    }
}

/// Byte offset to 1-based line and column (columns count characters).
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() + 1;
        (line + 1, col)
    }

    pub fn diagnostic(&self, path: &Path, e: SpanError) -> FrontendError {
        let (line, column) = self.line_col(e.span.start);
        FrontendError::Source(Diagnostic {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message,
            help: e.help,
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
    }
}
