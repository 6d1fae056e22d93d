//! Where the text of a marked file comes from: `--detect` hands the front
//! end a copy of the user's file with `#pragma scop` lines inserted, and
//! every position polytune reports (a warning's line, a rejection's
//! line:column, a SCoP's lines) must be the user's, not the copy's.
//!
//! An [`Origin`] maps each byte of the marked text back to a byte of the
//! user's text: a copied piece byte for byte, an inserted piece (a pragma
//! line, a line break put in front of one) to the place it stands for.

use super::error::Lines;

/// The user's text, and how a marked text was made from it.
#[derive(Debug, Clone)]
pub struct Origin {
    text: String,
    lines: Lines,
    /// In the order of the marked text, which they cover whole.
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Where the piece starts in the marked text.
    marked: usize,
    /// Where it comes from in the user's text.
    original: usize,
    /// Copied from the user's text (else inserted: every byte stands for
    /// `original`).
    copied: bool,
}

/// Builds a marked text and its [`Origin`] piece by piece.
#[cfg(feature = "detect")]
pub(crate) struct Marking<'t> {
    text: &'t str,
    out: String,
    pieces: Vec<Piece>,
}

#[cfg(feature = "detect")]
impl<'t> Marking<'t> {
    pub(crate) fn new(text: &'t str) -> Marking<'t> {
        Marking {
            text,
            out: String::with_capacity(text.len() + 64),
            pieces: Vec::new(),
        }
    }

    /// The marked text so far.
    pub(crate) fn out(&self) -> &str {
        &self.out
    }

    /// Copies `text[start..end]`.
    pub(crate) fn copy(&mut self, start: usize, end: usize) {
        if start < end {
            self.pieces.push(Piece {
                marked: self.out.len(),
                original: start,
                copied: true,
            });
            self.out.push_str(&self.text[start..end]);
        }
    }

    /// Inserts `s`, which stands for the user's byte `at`.
    pub(crate) fn insert(&mut self, s: &str, at: usize) {
        if !s.is_empty() {
            self.pieces.push(Piece {
                marked: self.out.len(),
                original: at.min(self.text.len()),
                copied: false,
            });
            self.out.push_str(s);
        }
    }

    /// The marked text and where it comes from.
    pub(crate) fn finish(self) -> (String, Origin) {
        let origin = Origin {
            text: self.text.to_string(),
            lines: Lines::new(self.text),
            pieces: self.pieces,
        };
        (self.out, origin)
    }
}

impl Origin {
    /// The user's byte that byte `offset` of the marked text stands for.
    pub(crate) fn offset(&self, offset: usize) -> usize {
        let k = self.pieces.partition_point(|p| p.marked <= offset);
        match k.checked_sub(1).map(|k| self.pieces[k]) {
            Some(p) if p.copied => (p.original + (offset - p.marked)).min(self.text.len()),
            Some(p) => p.original,
            None => offset.min(self.text.len()),
        }
    }

    /// The user's 1-based line and column of byte `offset` of the marked
    /// text.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        self.lines.line_col(&self.text, self.offset(offset))
    }
}

#[cfg(all(test, feature = "detect"))]
mod tests {
    use super::*;

    #[test]
    fn copied_bytes_map_to_themselves_and_inserted_ones_to_their_place() {
        let text = "int a;\nfor (;;) x;\nint b;\n";
        let mut m = Marking::new(text);
        m.copy(0, 7);
        m.insert("#pragma scop\n", 7);
        m.copy(7, 19);
        m.insert("#pragma endscop\n", 17);
        m.copy(19, text.len());
        let (marked, origin) = m.finish();
        assert_eq!(
            marked,
            "int a;\n#pragma scop\nfor (;;) x;\n#pragma endscop\nint b;\n"
        );
        let at = |needle: &str| marked.find(needle).unwrap();
        assert_eq!(origin.line_col(at("int a")), (1, 1));
        assert_eq!(origin.line_col(at("#pragma scop")), (2, 1));
        assert_eq!(origin.line_col(at("x;")), (2, 10));
        // The closing pragma stands for the region's last line.
        assert_eq!(origin.line_col(at("#pragma endscop")), (2, 11));
        assert_eq!(origin.line_col(at("int b")), (3, 1));
        assert_eq!(origin.line_col(marked.len()), (4, 1));
    }
}
