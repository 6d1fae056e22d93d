//! CSV text in memory, through the `csv` crate: how the reports
//! (`evaluate`'s table and predictions, `simulate`'s table) are written
//! as CSV. A field is quoted only when it must be (it holds a comma, a
//! quote or a line break); lines end in `\n`. The store's export streams
//! through the same crate with the same defaults (`lab::store::query`).

/// A CSV table being written into memory.
pub struct CsvText(csv::Writer<Vec<u8>>);

impl CsvText {
    /// A table whose first line is `header`.
    pub fn new<I, T>(header: I) -> CsvText
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let mut t = CsvText(csv::Writer::from_writer(Vec::new()));
        t.row(header);
        t
    }

    /// One line of fields (as many as the header's).
    pub fn row<I, T>(&mut self, fields: I)
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        // Writing into memory cannot fail; a line of another length is a
        // bug of the caller.
        self.0
            .write_record(fields)
            .expect("a CSV line as long as the header");
    }

    /// The text written.
    pub fn finish(self) -> String {
        let bytes = self.0.into_inner().expect("writing into memory");
        String::from_utf8(bytes).expect("UTF-8 fields")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let mut t = CsvText::new(["a", "b", "c"]);
        t.row(["x", "1.5", ""]);
        t.row(["fuse=max,tile=32x32x32", "say \"hi\"", "two\nlines"]);
        assert_eq!(
            t.finish(),
            "a,b,c\nx,1.5,\n\"fuse=max,tile=32x32x32\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
        );
    }
}
