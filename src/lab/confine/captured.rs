//! What is kept of a confined program's output: drained continuously,
//! kept up to a cap (the head, and the last [`TAIL`] bytes).

use super::TAIL;

/// What was kept of one output stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    /// The head (up to the cap), then, when bytes were dropped, the last
    /// [`TAIL`] bytes.
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    /// Bytes neither in the head nor in the tail.
    pub dropped: u64,
    /// The head takes no more (it reached the cap, or memory ran out).
    closed: bool,
}

impl Captured {
    /// Whether anything was dropped.
    pub(crate) fn truncated(&self) -> bool {
        self.dropped > 0
    }

    pub(super) fn push(&mut self, mut data: &[u8], cap: usize) {
        if !self.closed && self.head.len() < cap {
            let n = data.len().min(cap - self.head.len());
            // Grow no further than the cap and room for the gap's line
            // and the tail, so that `into_text` never reallocates; when
            // memory runs out first, keep no more.
            if self.head.len() + n > self.head.capacity() {
                let most = cap + TAIL + 128;
                let want = (self.head.capacity() * 2).clamp(self.head.len() + n, most);
                if self.head.try_reserve_exact(want - self.head.len()).is_err() {
                    self.closed = true;
                }
            }
            if !self.closed {
                self.head.extend_from_slice(&data[..n]);
                data = &data[n..];
            }
        }
        if data.is_empty() {
            return;
        }
        if data.len() >= TAIL {
            self.dropped += (self.tail.len() + data.len() - TAIL) as u64;
            self.tail.clear();
            self.tail.extend(&data[data.len() - TAIL..]);
        } else {
            self.tail.extend(data);
            let over = self.tail.len().saturating_sub(TAIL);
            self.dropped += over as u64;
            self.tail.drain(..over);
        }
    }

    /// The kept bytes as text; a gap is marked by a line saying how many
    /// bytes were dropped.
    pub(crate) fn into_text(self) -> String {
        let text = |v: Vec<u8>| {
            String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
        };
        let mut head = self.head;
        let (mut tail, mut dropped) = (self.tail, self.dropped);
        // Room for the rest (already there when the head is full).
        if !tail.is_empty() && head.try_reserve_exact(tail.len() + 128).is_err() {
            dropped += tail.len() as u64;
            tail.clear();
        }
        let mut s = text(head);
        if dropped > 0 || !tail.is_empty() {
            s.push_str(&format!(
                "\n[polytune: {dropped} bytes of this output dropped]\n"
            ));
            s.push_str(&text(tail.into()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_stream_keeps_its_head_and_tail() {
        let mut c = Captured::default();
        c.push(b"head", 8);
        c.push(&vec![b'x'; 3 * TAIL], 8);
        c.push(b"end", 8);
        assert!(c.truncated());
        assert_eq!(c.dropped, (3 * TAIL + 4 + 3 - 8 - TAIL) as u64);
        let t = c.into_text();
        assert!(t.starts_with("headxxxx\n[polytune: "), "{}", &t[..40]);
        assert!(t.ends_with("xxend"));
        let mut c = Captured::default();
        c.push(b"short", 8);
        assert!(!c.truncated());
        assert_eq!(c.into_text(), "short");
    }
}
