//! Cutting a CLI's stdout into lines as it arrives, in chunks of any size.
//!
//! A line is the bytes before a `\n` (the newline removed; a `\r` before it is kept, the
//! reducer sees the line as the CLI wrote it). Bytes are never interpreted: NUL bytes and
//! invalid UTF-8 pass through as they are. Memory is bounded: a line still without a
//! newline after `max_line + 1` bytes is cut there and handed on as one piece of
//! `max_line + 1` bytes (which the pipeline reports as a `line_too_large` diagnostic, since
//! it is over the cap), and the framer goes on with the rest, so a CLI that writes
//! without end holds at most `max_line + 1` bytes of the host's memory. Recorded as cut,
//! such a stream replays to the same lines.

/// The line cap, bytes (64 MiB). Lines longer than this are not given to the reducer: they
/// become a `line_too_large` diagnostic (`turn::pipeline`; the recording still holds
/// them). A line still without a newline after this many bytes + 1 is cut there (by
/// [`LineFramer`]), so memory stays bounded: the piece is such a diagnostic, the rest is
/// read as further lines. A recording is read back with the same cap
/// (`turn::recording::read`).
pub(crate) const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// Frames stdout chunks into lines. Holds at most `max_line + 1` bytes between calls.
#[derive(Debug)]
pub(crate) struct LineFramer {
    /// Bytes of the line not yet ended.
    partial: Vec<u8>,
    /// When the first byte of `partial` arrived (µs since the turn started).
    partial_stamp: u64,
    /// The longest piece handed on: `max_line + 1` bytes.
    max_piece: usize,
}

impl LineFramer {
    /// A framer that cuts a line without a newline after `max_line + 1` bytes.
    pub(crate) fn new(max_line: usize) -> LineFramer {
        LineFramer {
            partial: Vec::new(),
            partial_stamp: 0,
            max_piece: max_line.saturating_add(1),
        }
    }

    /// Takes one chunk received at `at` (µs) and calls `line` with every line it ends
    /// (newline removed), in order; a line that grew past the cap is handed on in pieces
    /// of `max_line + 1` bytes. Stops at the first error `line` returns (the bytes after
    /// it are dropped: the caller is failing the turn).
    pub(crate) fn push<E>(
        &mut self,
        chunk: &[u8],
        at: u64,
        mut line: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        while let Some(&first) = rest.first() {
            if self.partial.len() >= self.max_piece {
                // Full: this piece is handed on now, ended by a newline or not.
                line(&self.partial)?;
                self.partial.clear();
                if first == b'\n' {
                    rest = &rest[1..];
                }
                continue;
            }
            if self.partial.is_empty() {
                self.partial_stamp = at;
            }
            let room = self.max_piece - self.partial.len();
            let window = &rest[..rest.len().min(room)];
            match window.iter().position(|&b| b == b'\n') {
                Some(i) if self.partial.is_empty() => {
                    line(&window[..i])?;
                    rest = &rest[i + 1..];
                }
                Some(i) => {
                    self.partial.extend_from_slice(&window[..i]);
                    line(&self.partial)?;
                    self.partial.clear();
                    rest = &rest[i + 1..];
                }
                None => {
                    self.partial.extend_from_slice(window);
                    rest = &rest[window.len()..];
                }
            }
        }
        Ok(())
    }

    /// The bytes after the last newline, with the stamp of their first byte; `None` when
    /// the stream ended on a newline.
    pub(crate) fn rest(&self) -> Option<(u64, &[u8])> {
        (!self.partial.is_empty()).then_some((self.partial_stamp, self.partial.as_slice()))
    }

    /// Bytes held now (at most `max_line + 1`).
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.partial.len()
    }
}

#[cfg(test)]
#[path = "framer/tests.rs"]
mod tests;
