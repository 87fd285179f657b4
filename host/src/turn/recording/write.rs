//! Writing a recording as the CLI streams.

use super::{Data, ExitStatus, FORMAT, Header, Record, VERSION};
use crate::results::StopReason;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Appends records to a recording file; every record is flushed to the OS before the
/// call returns, so what was received is on disk before it is reduced.
pub(crate) struct RecordingWriter {
    file: std::io::BufWriter<std::fs::File>,
}

impl RecordingWriter {
    /// Creates `path` and writes the header.
    pub(crate) fn create(path: &Path, header: &Header) -> std::io::Result<RecordingWriter> {
        let mut writer = RecordingWriter {
            file: std::io::BufWriter::new(std::fs::File::create(path)?),
        };
        let mut header = header.clone();
        header.format = FORMAT.to_string();
        header.version = VERSION;
        writer.write_json(&header)?;
        Ok(writer)
    }

    /// Opens an existing recording to append records after what it holds (the model
    /// gateway's calls, after the turn).
    pub(crate) fn append(path: &Path) -> std::io::Result<RecordingWriter> {
        let file = std::fs::OpenOptions::new().append(true).open(path)?;
        Ok(RecordingWriter {
            file: std::io::BufWriter::new(file),
        })
    }

    /// One request through the model gateway (a `model_call` record).
    pub(crate) fn model_call(&mut self, call: &crate::gateway::ModelCall) -> std::io::Result<()> {
        self.write_json(&Record::ModelCall(Box::new(call.clone())))
    }

    /// One stdout line (newline removed); `eof` = bytes after the last newline.
    pub(crate) fn stdout_line(
        &mut self,
        stamp_us: u64,
        bytes: &[u8],
        eof: bool,
    ) -> std::io::Result<()> {
        self.write_json(&Record::Out {
            us: stamp_us,
            data: Data::of(bytes),
            eof,
        })
    }

    /// One stderr chunk as read.
    pub(crate) fn stderr_chunk(&mut self, stamp_us: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.write_json(&Record::Err {
            us: stamp_us,
            data: Data::of(bytes),
        })
    }

    /// A main request the scripted model held (`turn` completed assistant turns in it),
    /// by the cap `reason` (`max_turns` is written as no reason, as before `reason`
    /// existed), `tools` tool calls handed out before it.
    pub(crate) fn held_call(
        &mut self,
        stamp_us: u64,
        turn: u32,
        reason: StopReason,
        tools: Option<u32>,
    ) -> std::io::Result<()> {
        self.write_json(&Record::Call {
            us: stamp_us,
            turn,
            reason: (reason != StopReason::MaxTurns).then_some(reason),
            tools,
        })
    }

    /// The host's stop decision (`reason` as in `task.json`).
    pub(crate) fn stop(&mut self, stamp_us: u64, reason: StopReason) -> std::io::Result<()> {
        self.write_json(&Record::Stop {
            us: stamp_us,
            reason,
        })
    }

    /// A side file of the launch plan (`path` as the plan gave it), read after the CLI
    /// exited; `None` = the CLI wrote none.
    pub(crate) fn side_file(
        &mut self,
        stamp_us: u64,
        path: &str,
        content: Option<&[u8]>,
    ) -> std::io::Result<()> {
        let (text, b64) = match content.map(Data::of) {
            Some(Data::Text(text)) => (Some(text), None),
            Some(Data::B64(b64)) => (None, Some(b64)),
            None => (None, None),
        };
        self.write_json(&Record::SideFile {
            us: stamp_us,
            path: path.to_string(),
            text,
            b64,
        })
    }

    /// The exit record.
    pub(crate) fn exit(&mut self, status: ExitStatus) -> std::io::Result<()> {
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
