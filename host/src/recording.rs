//! The recording: everything a CLI wrote, with receive stamps, written before any parsing.
//!
//! # Format (`recording.jsonl`, version 1)
//!
//! JSON Lines. The first line is the header; every later line is one record:
//!
//! ```text
//! {"format":"coder-eval-recording","version":1,"harness":"claude-code","cli_version":"2.1.197","argv":["claude","-p","…"],"max_turns":2}
//! {"t":"out","us":1523,"text":"{\"type\":\"system\",…}"}   one stdout line, newline removed
//! {"t":"out","us":1525,"b64":"/+7/…"}                      a stdout line that is not UTF-8
//! {"t":"out","us":1530,"text":"{\"type\":","eof":true}     bytes after the last newline
//! {"t":"err","us":1400,"text":"warning: …\n"}              a stderr chunk, as read
//! {"t":"call","us":2040,"turn":2}                          the scripted model held call 3
//! {"t":"stop","us":2050,"reason":"max_turns"}              the host decided to end the turn
//! {"t":"exit","us":2100,"code":0}                          the CLI ended (`code` or `signal`;
//!                                                          `"turn_limit":true` when the code
//!                                                          is the CLI's documented turn limit)
//! ```
//!
//! - `us`: µs since the turn started, from the host's one monotonic clock.
//! - Exactly one of `text` (the bytes are valid UTF-8) or `b64` (standard base64 of the
//!   exact bytes) per `out`/`err` record, so any byte sequence round-trips.
//! - `stop` is written the moment the host decides to end the turn (a cap, a timeout,
//!   Ctrl-C, ...; reasons as in `task.json`): stdout lines after it arrived while the CLI
//!   was being stopped, and replay keeps them without counting them, as the live run did.
//! - `call` is written when the scripted model receives a main request past `max_turns`
//!   (`turn` = its completed assistant turns, so it asks for call `turn + 1`) and holds it
//!   unanswered: that call began although the stream never shows it, and the cap fires on
//!   it. Replay counts it at the same place among the stdout lines.
//! - Header fields other than `format` and `version` are optional; readers ignore fields
//!   they do not know.
//!
//! A file whose first line is not such a header is read as a **plain stdout capture**
//! (a CLI's JSONL output saved as is): its lines get synthesized stamps 1 ms apart.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `format` value of a recording header.
pub const FORMAT: &str = "coder-eval-recording";
/// The recording format version this host writes and reads.
pub const VERSION: u32 = 1;

/// The first line of a recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The harness name (e.g. `claude-code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// The CLI's version as `--version` printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The exact argv the CLI was started with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// The task's `max_turns`, when it had one (replay needs it to judge the cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The task's `max_tool_calls`, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
}

/// One record after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
enum Record {
    Out {
        us: u64,
        #[serde(flatten)]
        data: Data,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        eof: bool,
    },
    Err {
        us: u64,
        #[serde(flatten)]
        data: Data,
    },
    Call {
        us: u64,
        turn: u32,
    },
    Stop {
        us: u64,
        reason: String,
    },
    Exit {
        us: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        turn_limit: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Data {
    Text(String),
    B64(String),
}

impl Data {
    fn of(bytes: &[u8]) -> Data {
        match std::str::from_utf8(bytes) {
            Ok(text) => Data::Text(text.to_string()),
            Err(_) => Data::B64(B64.encode(bytes)),
        }
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        match self {
            Data::Text(text) => Ok(text.clone().into_bytes()),
            Data::B64(b64) => B64.decode(b64).map_err(|e| format!("bad base64: {e}")),
        }
    }
}

/// One stdout line with its stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampedLine {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The line's bytes, newline removed.
    pub bytes: Vec<u8>,
    /// 1-based number of this stdout line in the stream (in a plain capture, its line
    /// number; in a recording, its position among the `out` records).
    pub source_line: u64,
}

/// How the CLI process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The CLI documents this exit code as its own turn limit (its launch plan's exit
    /// codes, kind `turn_limit`: Gemini CLI's 53). A CLI that exits so without its final
    /// result (the stream cut as it exited) was still stopped by its own `max_turns` cap.
    pub turn_limit: bool,
}

/// The host's stop decision, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedStop {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// The reason (`max_turns`, `turn_timeout`, ...).
    pub reason: String,
    /// How many complete stdout lines were recorded before it.
    pub after_lines: usize,
}

/// A model call the scripted model held (it never reached the stream), as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldCall {
    /// µs since the turn started.
    pub stamp_us: u64,
    /// Completed assistant turns in the request: it asked for call `turn + 1`.
    pub turn: u32,
    /// How many complete stdout lines were recorded before it.
    pub after_lines: usize,
}

/// A recording or plain capture, read back.
#[derive(Debug, Clone, Default)]
pub struct ReadRecording {
    /// The header; `None` for a plain capture.
    pub header: Option<Header>,
    /// Complete stdout lines in order.
    pub lines: Vec<StampedLine>,
    /// Bytes after the last newline, when the stream ended inside a line.
    pub truncated: Option<StampedLine>,
    /// The stderr text, concatenated (lossy UTF-8).
    pub stderr: String,
    /// The exit record, if the recording has one.
    pub exit: Option<ExitStatus>,
    /// The host's stop decision, if it made one.
    pub stop: Option<RecordedStop>,
    /// Model calls the scripted model held, in order.
    pub held_calls: Vec<HeldCall>,
    /// Problems met while reading: (1-based line, message). Reading never stops at one
    /// except a broken recording line, after which the rest is unreadable.
    pub problems: Vec<(u64, String)>,
}

/// Errors reading a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The file could not be read.
    #[error("could not read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The header names a format version this host does not read.
    #[error(
        "{path}:1: recording format version {found} is not supported (this host reads version {VERSION})"
    )]
    Version { path: PathBuf, found: u32 },
}

impl ReadRecording {
    /// The turn's end: the host's stop (or the exit, if earlier), else the exit stamp,
    /// else 1 ms after the last stamp seen.
    pub fn end_us(&self) -> u64 {
        match (&self.stop, self.exit) {
            (Some(stop), Some(exit)) => return stop.stamp_us.min(exit.stamp_us),
            (Some(stop), None) => return stop.stamp_us,
            (None, Some(exit)) => return exit.stamp_us,
            (None, None) => {}
        }
        let last = self
            .truncated
            .as_ref()
            .or(self.lines.last())
            .map_or(0, |l| l.stamp_us);
        last + 1000
    }
}

/// The header of a recording (reading its first line only); `None` for a plain capture.
pub fn read_header(path: &Path) -> Result<Option<Header>, RecordingError> {
    use std::io::BufRead;
    let io = |source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut first = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(io)?;
    Ok(serde_json::from_slice::<Header>(first.trim_ascii())
        .ok()
        .filter(|h| h.format == FORMAT))
}

/// Reads a recording, or a plain stdout capture (see the module docs).
pub fn read(path: &Path) -> Result<ReadRecording, RecordingError> {
    let bytes = std::fs::read(path).map_err(|source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    match serde_json::from_slice::<Header>(first) {
        Ok(header) if header.format == FORMAT => {
            if header.version != VERSION {
                return Err(RecordingError::Version {
                    path: path.to_path_buf(),
                    found: header.version,
                });
            }
            Ok(read_records(header, &bytes))
        }
        _ => Ok(read_plain(&bytes)),
    }
}

/// Splits a plain capture on newline bytes; line i (0-based) is stamped (i + 1) ms.
pub fn read_plain(bytes: &[u8]) -> ReadRecording {
    let mut out = ReadRecording::default();
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let rest = parts.pop().unwrap_or_default();
    for (i, part) in parts.into_iter().enumerate() {
        out.lines.push(StampedLine {
            stamp_us: (i as u64 + 1) * 1000,
            bytes: part.to_vec(),
            source_line: i as u64 + 1,
        });
    }
    if !rest.is_empty() {
        let n = out.lines.len() as u64;
        out.truncated = Some(StampedLine {
            stamp_us: (n + 1) * 1000,
            bytes: rest.to_vec(),
            source_line: n + 1,
        });
    }
    out
}

fn read_records(header: Header, bytes: &[u8]) -> ReadRecording {
    let mut out = ReadRecording {
        header: Some(header),
        ..Default::default()
    };
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate().skip(1) {
        let line_no = i as u64 + 1;
        if raw.trim_ascii().is_empty() {
            continue;
        }
        let record = match serde_json::from_slice::<Record>(raw) {
            Ok(record) => record,
            Err(err) => {
                out.problems
                    .push((line_no, format!("unreadable recording line: {err}")));
                continue;
            }
        };
        match record {
            Record::Out { us, data, eof } => match data.bytes() {
                Ok(bytes) => {
                    let line = StampedLine {
                        stamp_us: us,
                        bytes,
                        source_line: out.lines.len() as u64 + 1,
                    };
                    if eof {
                        out.truncated = Some(line);
                    } else {
                        out.lines.push(line);
                    }
                }
                Err(err) => out.problems.push((line_no, err)),
            },
            Record::Err { data, .. } => match data.bytes() {
                Ok(bytes) => out.stderr.push_str(&String::from_utf8_lossy(&bytes)),
                Err(err) => out.problems.push((line_no, err)),
            },
            Record::Call { us, turn } => out.held_calls.push(HeldCall {
                stamp_us: us,
                turn,
                after_lines: out.lines.len(),
            }),
            Record::Stop { us, reason } => {
                out.stop = Some(RecordedStop {
                    stamp_us: us,
                    reason,
                    after_lines: out.lines.len(),
                })
            }
            Record::Exit {
                us,
                code,
                signal,
                turn_limit,
            } => {
                out.exit = Some(ExitStatus {
                    stamp_us: us,
                    code,
                    signal,
                    turn_limit,
                })
            }
        }
    }
    out
}

/// Appends records to a recording file; every record is flushed to the OS before the
/// call returns, so what was received is on disk before it is reduced.
pub struct RecordingWriter {
    file: std::io::BufWriter<std::fs::File>,
}

impl RecordingWriter {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path, header: &Header) -> std::io::Result<RecordingWriter> {
        let mut writer = RecordingWriter {
            file: std::io::BufWriter::new(std::fs::File::create(path)?),
        };
        let mut header = header.clone();
        header.format = FORMAT.to_string();
        header.version = VERSION;
        writer.write_json(&header)?;
        Ok(writer)
    }

    /// One stdout line (newline removed); `eof` = bytes after the last newline.
    pub fn stdout_line(&mut self, stamp_us: u64, bytes: &[u8], eof: bool) -> std::io::Result<()> {
        self.write_json(&Record::Out {
            us: stamp_us,
            data: Data::of(bytes),
            eof,
        })
    }

    /// One stderr chunk as read.
    pub fn stderr_chunk(&mut self, stamp_us: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.write_json(&Record::Err {
            us: stamp_us,
            data: Data::of(bytes),
        })
    }

    /// A main request the scripted model held (`turn` completed assistant turns in it).
    pub fn held_call(&mut self, stamp_us: u64, turn: u32) -> std::io::Result<()> {
        self.write_json(&Record::Call { us: stamp_us, turn })
    }

    /// The host's stop decision (`reason` as in `task.json`).
    pub fn stop(&mut self, stamp_us: u64, reason: &str) -> std::io::Result<()> {
        self.write_json(&Record::Stop {
            us: stamp_us,
            reason: reason.to_string(),
        })
    }

    /// The exit record.
    pub fn exit(&mut self, status: ExitStatus) -> std::io::Result<()> {
        self.write_json(&Record::Exit {
            us: status.stamp_us,
            code: status.code,
            signal: status.signal,
            turn_limit: status.turn_limit,
        })
    }

    fn write_json<T: Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.file, value)?;
        self.file.write_all(b"\n")?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_bytes() {
        let dir = std::env::temp_dir().join(format!("ce-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        let mut w = RecordingWriter::create(
            &path,
            &Header {
                harness: Some("claude-code".into()),
                argv: vec!["claude".into()],
                ..Default::default()
            },
        )
        .unwrap();
        w.stdout_line(10, b"{\"a\":1}", false).unwrap();
        w.stdout_line(20, b"\xff\xfe bad", false).unwrap();
        w.stderr_chunk(25, b"warn\n").unwrap();
        w.held_call(27, 2).unwrap();
        w.stop(28, "turn_timeout").unwrap();
        w.stdout_line(30, b"{\"tru", true).unwrap();
        w.exit(ExitStatus {
            stamp_us: 40,
            code: Some(1),
            signal: None,
            turn_limit: false,
        })
        .unwrap();
        drop(w);
        let r = read(&path).unwrap();
        assert_eq!(
            r.header.as_ref().unwrap().harness.as_deref(),
            Some("claude-code")
        );
        assert_eq!(r.lines.len(), 2);
        assert_eq!(r.lines[1].bytes, b"\xff\xfe bad");
        assert_eq!(r.truncated.as_ref().unwrap().bytes, b"{\"tru");
        assert_eq!(r.stderr, "warn\n");
        assert_eq!(r.exit.unwrap().code, Some(1));
        let stop = r.stop.as_ref().unwrap();
        assert_eq!(
            (stop.stamp_us, stop.reason.as_str(), stop.after_lines),
            (28, "turn_timeout", 2)
        );
        assert_eq!(r.end_us(), 28);
        assert_eq!(
            r.held_calls,
            [HeldCall {
                stamp_us: 27,
                turn: 2,
                after_lines: 2
            }]
        );
    }

    #[test]
    fn plain_capture_gets_synthetic_stamps() {
        let r = read_plain(b"{}\n{}\n{\"x\"");
        assert_eq!(
            r.lines.iter().map(|l| l.stamp_us).collect::<Vec<_>>(),
            [1000, 2000]
        );
        assert_eq!(r.truncated.unwrap().stamp_us, 3000);
        assert_eq!(read_plain(b"").lines.len(), 0);
    }
}
