//! Writing a result file so that a reader (or a host killed mid-write) sees either the
//! previous file or the whole new one, never a part: [`write_atomically`].

use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The process's result writes, so that an exit on a second signal can let the writes in
/// flight finish instead of cutting them (a stray temporary file, a `task.json` without
/// its `run.json` row): [`close_writes`].
static WRITES: WriteGate = WriteGate::new();

/// Counts the writes in flight and, once closed, refuses new ones.
struct WriteGate {
    in_flight: AtomicUsize,
    closed: AtomicBool,
}

/// One write in flight, for as long as it lives.
struct InFlight<'a>(&'a WriteGate);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WriteGate {
    const fn new() -> WriteGate {
        WriteGate {
            in_flight: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// A write may start: `None` once the gate is closed.
    fn enter(&self) -> Option<InFlight<'_>> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let entered = InFlight(self);
        (!self.closed.load(Ordering::SeqCst)).then_some(entered)
    }

    /// Closes the gate and waits, up to `grace`, for the writes in flight to end; returns
    /// whether they all did.
    fn close(&self, grace: Duration) -> bool {
        self.closed.store(true, Ordering::SeqCst);
        let until = Instant::now() + grace;
        while self.in_flight.load(Ordering::SeqCst) > 0 {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }
}

/// Lets the result writes in flight finish, up to `grace`, and refuses every later one
/// (it fails with an error saying the run is exiting): for a process about to exit at
/// once (a second signal), so that no result file is cut mid-write and no temporary file
/// is left. Returns whether every write in flight ended within `grace`.
pub fn close_writes(grace: Duration) -> bool {
    WRITES.close(grace)
}

/// Writes `bytes` to `path` atomically: into a uniquely named temporary file in the same
/// folder (`.<name>.<random>.tmp`, so two writers never share one), flushed to disk
/// (`fsync`), then renamed over `path` (atomic on one file system), and the folder synced
/// so the rename itself survives a crash. On any error the temporary file is removed and
/// `path` is left as it was. The temporary files are `tempfile`'s, made with the mode a
/// plain `File::create` gives (0666 less the umask). Errors: the folder
/// cannot be written, the disk is full, an I/O error; the process is exiting
/// ([`close_writes`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let Some(_in_flight) = WRITES.enter() else {
        return Err(std::io::Error::other(format!(
            "not written ({}): the run is exiting on a second signal",
            path.display()
        )));
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // A result file is made like any other (`File::create`): 0666 less the umask
    // (0644 under the usual 022), not `tempfile`'s private 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable once the folder is synced; a file system that cannot sync a
    // folder (some network ones) still has the file renamed.
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// Writes `value` as pretty JSON (and a final newline) to `path` with
/// [`write_atomically`]. Errors: as there, or `value` does not serialize.
pub(crate) fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    write_atomically(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_gate_waits_for_the_writes_in_flight_and_refuses_new_ones() {
        let gate: &'static WriteGate = Box::leak(Box::new(WriteGate::new()));
        let first = gate.enter().expect("open");
        let closer = std::thread::spawn(move || {
            let start = Instant::now();
            (gate.close(Duration::from_secs(10)), start.elapsed())
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !closer.is_finished(),
            "close returned with a write in flight"
        );
        assert!(gate.enter().is_none(), "a write started on a closing gate");
        drop(first);
        let (settled, _) = closer.join().unwrap();
        assert!(settled);
        assert_eq!(gate.in_flight.load(Ordering::SeqCst), 0);
        // A write that never ends: the close gives up at its grace.
        let stuck = WriteGate::new();
        let _held = stuck.in_flight.fetch_add(1, Ordering::SeqCst);
        assert!(!stuck.close(Duration::from_millis(50)));
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    /// The result file's mode is what `File::create` gives beside it (0644 under umask
    /// 022), not a private 0600: other users and tools read results.
    #[cfg(unix)]
    #[test]
    fn the_file_gets_the_mode_of_a_file_created_plainly() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ce-atomic-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let plain = dir.join("plain.json");
        std::fs::write(&plain, b"{}").unwrap();
        let atomic = dir.join("task.json");
        write_atomically(&atomic, b"{}").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain), "{:o}", mode(&atomic));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("ce-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        write_json_atomically(&path, &serde_json::json!({"rows": [1]})).unwrap();
        write_json_atomically(&path, &serde_json::json!({"rows": [1, 2]})).unwrap();
        let back: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["rows"], serde_json::json!([1, 2]));
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
        // A failed write (the target is a folder: the rename fails) leaves the folder as
        // it was: no temporary file, the folder untouched.
        let blocked = dir.join("blocked");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        assert!(write_atomically(&blocked, b"x").is_err());
        assert!(blocked.join("inside").is_dir());
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
        // Many writers at once: every read sees one whole version.
        std::thread::scope(|s| {
            for i in 0..8 {
                let path = &path;
                s.spawn(move || {
                    for j in 0..20 {
                        write_json_atomically(path, &serde_json::json!({"w": i, "j": j})).unwrap();
                        let text = std::fs::read_to_string(path).unwrap();
                        serde_json::from_str::<serde_json::Value>(&text).unwrap();
                    }
                });
            }
        });
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }
}
