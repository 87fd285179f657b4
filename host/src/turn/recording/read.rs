//! Reading a recording or a plain capture, one item at a time.

use super::{
    Data, ExitStatus, FORMAT, Header, HeldCall, Record, RecordedStop, RecordingError, StampedLine,
    VERSION,
};
use crate::results::StopReason;
use std::io::{BufRead, Read};
use std::path::Path;

/// One thing a recording holds, in the order it holds them.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A complete stdout line.
    Line(StampedLine),
    /// The bytes after the last newline.
    Truncated(StampedLine),
    /// A stderr chunk.
    Stderr(Vec<u8>),
    /// A model call the scripted model held (`after_lines` = lines before it).
    HeldCall(HeldCall),
    /// One request through the model gateway.
    ModelCall(Box<crate::gateway::ModelCall>),
    /// The host's stop decision (`after_lines` = lines before it).
    Stop(RecordedStop),
    /// How the CLI ended.
    Exit(ExitStatus),
    /// A side file of the launch plan: (path as the plan gave it, its bytes; `None` = the
    /// CLI wrote none).
    SideFile(String, Option<Vec<u8>>),
    /// A recording line that could not be read.
    Problem(Problem),
    /// A stop record whose reason this host does not know (a newer host wrote it, or the
    /// file was edited): the host stopped the turn there, for a reason replay cannot name.
    UnknownStop {
        /// µs since the turn started, when the record carries it.
        stamp_us: Option<u64>,
        /// The reason as written.
        reason: String,
        /// The record's 1-based file line.
        file_line: u64,
        /// How many complete stdout lines were recorded before it.
        after_lines: usize,
    },
}

/// A recording line that could not be read: where, why, and what it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line of the recording file.
    pub file_line: u64,
    /// Why it could not be read.
    pub message: String,
    /// The line as written (lossy UTF-8, at most [`PROBLEM_RAW_BYTES`]).
    pub raw: String,
    /// Its `us` stamp, when the line is JSON carrying one.
    pub stamp_us: Option<u64>,
}

/// The most of an unreadable line a [`Problem`] keeps (the recording has it whole).
pub(crate) const PROBLEM_RAW_BYTES: usize = 64 * 1024;

impl Problem {
    fn new(file_line: u64, message: String, raw: &[u8]) -> Problem {
        let stamp_us = serde_json::from_slice::<serde_json::Value>(raw)
            .ok()
            .and_then(|v| v.get("us").and_then(serde_json::Value::as_u64));
        let kept = &raw[..raw.len().min(PROBLEM_RAW_BYTES)];
        Problem {
            file_line,
            message,
            raw: String::from_utf8_lossy(kept).into_owned(),
            stamp_us,
        }
    }
}

/// Reads a recording or a plain capture one [`Item`] at a time, holding one line in
/// memory: what replay keeps is what the turn keeps, not the file.
pub(crate) struct Reader<R> {
    input: R,
    header: Option<Header>,
    /// The first line of a plain capture, read while looking for a header.
    pending: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// 1-based number of the file line last read.
    file_line: u64,
    /// Complete stdout lines so far.
    out_lines: u64,
    /// A plain capture's line without a newline after `max_line + 1` bytes is cut there,
    /// as the live framer cuts it (`turn::framer`), so memory stays bounded.
    max_piece: usize,
}

impl Reader<std::io::BufReader<std::fs::File>> {
    /// Opens `path`; reads its header when it has one. Errors: the file cannot be read,
    /// or its header names a format version this host does not read.
    pub(crate) fn open(path: &Path) -> Result<Self, RecordingError> {
        let io = |source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut reader = Reader::new(std::io::BufReader::with_capacity(1 << 16, file))
            .with_max_line(crate::turn::framer::DEFAULT_MAX_LINE_BYTES);
        if let Some(found) = reader.start().map_err(io)? {
            return Err(RecordingError::Version {
                path: path.to_path_buf(),
                found,
            });
        }
        Ok(reader)
    }
}

#[cfg(test)]
impl<'a> Reader<&'a [u8]> {
    /// A reader of `bytes` as a plain capture, whatever its first line.
    pub(crate) fn plain(bytes: &'a [u8]) -> Self {
        Reader::new(bytes)
    }
}

impl<R: std::io::BufRead> Reader<R> {
    fn new(input: R) -> Self {
        Reader {
            input,
            header: None,
            pending: None,
            buf: Vec::new(),
            file_line: 0,
            out_lines: 0,
            max_piece: usize::MAX,
        }
    }

    /// Cuts a plain capture's lines longer than `max_line` bytes after `max_line + 1`
    /// bytes, as the live run cuts what a CLI writes (`DEFAULT_MAX_LINE_BYTES`): such a
    /// line is read as pieces of `max_line + 1` bytes, holding no more in memory.
    pub(crate) fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_piece = max_line.saturating_add(1);
        self
    }

    /// Reads the first line: a header (returning its version when it is not
    /// [`VERSION`]), or the first line of a plain capture.
    fn start(&mut self) -> std::io::Result<Option<u32>> {
        let mut first = Vec::new();
        let limit = u64::try_from(self.max_piece).unwrap_or(u64::MAX);
        Read::take(&mut self.input, limit).read_until(b'\n', &mut first)?;
        let line = first.strip_suffix(b"\n").unwrap_or(&first);
        match serde_json::from_slice::<Header>(line) {
            Ok(header) if header.format == FORMAT => {
                self.file_line = 1;
                if header.version != VERSION {
                    return Ok(Some(header.version));
                }
                self.header = Some(header);
            }
            _ => self.pending = Some(first),
        }
        Ok(None)
    }

    /// The header; `None` for a plain capture.
    pub(crate) fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The next item; `None` at the end.
    pub(crate) fn next_item(&mut self) -> std::io::Result<Option<Item>> {
        if self.header.is_none() {
            return self.next_plain();
        }
        loop {
            self.buf.clear();
            if self.input.read_until(b'\n', &mut self.buf)? == 0 {
                return Ok(None);
            }
            self.file_line += 1;
            let raw = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            if raw.trim_ascii().is_empty() {
                continue;
            }
            let record = match super::flat::read_record(raw) {
                Ok(record) => record,
                Err(err) => {
                    let raw = raw.to_vec();
                    return Ok(Some(self.unreadable(&raw, err)));
                }
            };
            return Ok(Some(self.item(record)));
        }
    }

    /// A line that is not a record this host reads: a stop record with an unknown
    /// reason, or a problem carrying the line.
    fn unreadable(&self, raw: &[u8], err: serde_json::Error) -> Item {
        let value = serde_json::from_slice::<serde_json::Value>(raw).ok();
        if let Some(v) = value.as_ref().filter(|v| v["t"] == "stop")
            && let Some(reason) = v.get("reason")
        {
            return Item::UnknownStop {
                stamp_us: v.get("us").and_then(serde_json::Value::as_u64),
                reason: reason
                    .as_str()
                    .map_or_else(|| reason.to_string(), str::to_string),
                file_line: self.file_line,
                after_lines: self.out_lines as usize,
            };
        }
        Item::Problem(Problem::new(
            self.file_line,
            format!("unreadable recording line: {err}"),
            raw,
        ))
    }

    /// A problem with the line just read (still in the buffer).
    fn problem_here(&self, message: String) -> Item {
        let raw = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        Item::Problem(Problem::new(self.file_line, message, raw))
    }

    fn item(&mut self, record: Record) -> Item {
        let after_lines = self.out_lines as usize;
        match record {
            Record::Out { us, data, eof } => match data.into_bytes() {
                Ok(bytes) => {
                    let line = StampedLine {
                        stamp_us: us,
                        bytes,
                        source_line: self.out_lines + 1,
                    };
                    if eof {
                        Item::Truncated(line)
                    } else {
                        self.out_lines += 1;
                        Item::Line(line)
                    }
                }
                Err(err) => self.problem_here(err),
            },
            Record::Err { data, .. } => match data.into_bytes() {
                Ok(bytes) => Item::Stderr(bytes),
                Err(err) => self.problem_here(err),
            },
            Record::Call {
                us,
                turn,
                reason,
                tools,
            } => Item::HeldCall(HeldCall {
                stamp_us: us,
                turn,
                reason: reason.unwrap_or(StopReason::MaxTurns),
                tool_calls_before: tools,
                after_lines,
            }),
            Record::ModelCall(call) => Item::ModelCall(call),
            Record::Stop { us, reason } => Item::Stop(RecordedStop {
                stamp_us: us,
                reason,
                after_lines,
            }),
            Record::SideFile {
                path, text, b64, ..
            } => match (text, b64) {
                (None, None) => Item::SideFile(path, None),
                (Some(text), None) => Item::SideFile(path, Some(text.into_bytes())),
                (None, Some(b64)) => match Data::B64(b64).into_bytes() {
                    Ok(bytes) => Item::SideFile(path, Some(bytes)),
                    Err(err) => self.problem_here(err),
                },
                (Some(_), Some(_)) => {
                    self.problem_here("a side_file record with both text and b64".into())
                }
            },
            Record::Exit {
                us,
                code,
                signal,
                turn_limit,
            } => Item::Exit(ExitStatus {
                stamp_us: us,
                code,
                signal,
                turn_limit,
            }),
        }
    }

    /// A plain capture: every newline-ended piece is a line (line i, 0-based, stamped
    /// (i + 1) ms); a non-empty piece after the last newline is the truncated rest.
    fn next_plain(&mut self) -> std::io::Result<Option<Item>> {
        let limit = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let mut piece = match self.pending.take() {
            Some(mut first) => {
                if first.len() > self.max_piece {
                    // The first line, read while looking for a header: cut it here.
                    self.pending = Some(first.split_off(self.max_piece));
                } else if first.last() != Some(&b'\n') {
                    // Read with a smaller cut: the rest of it is still to come.
                    let more = limit(self.max_piece - first.len());
                    Read::take(&mut self.input, more).read_until(b'\n', &mut first)?;
                }
                first
            }
            None => {
                // Read into the reused buffer, then copy the line out once at its size
                // (growing a fresh buffer line by line costs several reallocations each).
                self.buf.clear();
                Read::take(&mut self.input, limit(self.max_piece))
                    .read_until(b'\n', &mut self.buf)?;
                self.buf.clone()
            }
        };
        if piece.is_empty() {
            return Ok(None);
        }
        let n = self.out_lines + 1;
        let mut ended = piece.last() == Some(&b'\n');
        if ended {
            piece.pop();
        } else if piece.len() >= self.max_piece {
            // A full piece: it ends here, with the newline that follows it if one does,
            // and is the truncated rest only when nothing follows.
            ended = match self.pending.as_mut() {
                Some(rest) => {
                    if rest.first() == Some(&b'\n') {
                        rest.remove(0);
                    }
                    true
                }
                None => {
                    let next = self.input.fill_buf()?.first().copied();
                    if next == Some(b'\n') {
                        self.input.consume(1);
                    }
                    next.is_some()
                }
            };
        }
        let line = StampedLine {
            stamp_us: n * 1000,
            bytes: piece,
            source_line: n,
        };
        Ok(Some(if ended {
            self.out_lines = n;
            Item::Line(line)
        } else {
            Item::Truncated(line)
        }))
    }
}
