//! End-to-end replay: the whole `coder-eval replay --json` command (read the file, reduce
//! every line through the sandboxed Claude Code component, collect, serialize the turn
//! record) over one long, real-shaped Claude Code session, against a bare Python
//! `json.loads` loop over the same file.
//!
//! The stream is one session built from a real recording
//! (`tests/corpus/live/claude/hello.jsonl`): its `init` line, then its two tool-using model
//! calls repeated with fresh message and tool ids per copy (so the collector sees tens of
//! thousands of distinct calls and tool calls, as a long agent session does), then its
//! closing message and result. About 64 MiB, as a plain capture and as a recording.
//!
//! `cargo bench --bench replay_e2e` runs, for each form, five rounds of one replay and one
//! Python loop, interleaved (a shared machine whose speed drifts disturbs both alike),
//! and prints the best of each side: MB/s and wall time, the replay's peak RSS (the
//! child's `ru_maxrss`), and the CPU time of both (the child's user + system time, start-up
//! and component loading included; Python's `process_time` around its loop, start-up
//! excluded). Target (issue 10): the capture's replay at least as fast as the Python loop,
//! in MB/s as the issue states it (wall time: the issue put that loop at about 100 MB/s
//! here; it measures 60-100 MB/s on this shared machine from one hour to the next), and a
//! peak RSS that follows what the turn keeps, not the input's size: at most
//! [`RSS_PER_RECORD`] times the record's size, plus [`RSS_PER_LONGEST_LINE`] times the
//! longest line, plus [`RSS_SLACK`], above a replay's start-up, measured with the streams
//! written by a child process, on the two forms and on two more streams of the same size
//! whose commands print 16 KB and 1 MiB each (the record keeps 4 KiB excerpts: a third of
//! the input, and a few hundred KiB). It prints PASS, or FAIL and exits 1; this
//! is a benchmark, not a test, so no timing is ever asserted in `cargo test`. MB/s are MiB
//! a second. `REPLAY_E2E_MIB=N` sets another size.
//!
//! The replay runs on three threads (`turn::replay`): one reads the file, one runs the
//! reducer (the slowest stage: with its component calls, about four fifths of the wall
//! time), the calling one collects, then finishes the record and writes it, its long lists
//! on two threads (`results::write_turn_record_pretty`). The stages overlap, so the wall
//! time is shorter than the CPU time, the sum of the threads. Handing lines and events
//! between threads costs CPU where memory is freed by another thread than the one that
//! allocated it: the binary uses mimalloc, and the lines' buffers go back to the reading
//! thread to be freed. Stop 27 (glibc malloc, one thread writing): 0.95x Python's wall
//! time on an idle 2-core machine; stop 28, with both, six runs of the bench: 0.98x to
//! 1.48x on the capture (one run under 1x, with Python's loop itself at half its best
//! speed), 0.80x to 1.10x on the recording (whose reading thread, unwrapping each record,
//! takes more of the second core), peak RSS 107-109 MiB for a 44 MiB record. The
//! bench prints the CPU ratio beside the wall ratio and judges the wall ratio, the issue's
//! MB/s (a busy machine, whose second core is taken, shows the two alike). Python's loop
//! uses one core.
//!
//! Where the time goes (release build, 64 MiB capture, 125 353 lines, `perf record` of the
//! replay with `CODER_EVAL_PROFILE=perfmap` and a Claude Code component built with its
//! names; harness components run without fuel, bounded by an epoch deadline: fuel
//! metering had cost about 15% of the whole): the guest's JSON parsing about 31%, its
//! allocator and drops 9%, hashing ids 4%, validating each line as UTF-8 2%; in the host,
//! the collector about 13% (a third of it parsing each tool input to a `Value` again for
//! the record), writing the 44 MiB pretty record 8%, lifting the events out of the
//! component 6.5%, reading lines 3%. The per-call cost of the component model is small:
//! 125 000 trivial lines take 0.16 s in all, so batching lines per call would save about 3%.
//! (That was one thread. Stop 28, the reducing thread alone, by samples: the guest about
//! 63%, of which its allocator (talc) a seventh; `memmove` 11%: about 20 small copies a line,
//! 5 of them the guest's `memory.copy` calls out to the host, 7 moving lifted events; the
//! component calls' own machinery about 8%; mimalloc 5%.)
//!
//! The same reducer compiled natively (harness-kit's `ClaudeReducer` fed the capture's
//! lines in a release build) takes about 0.36x Python's CPU time over the same capture;
//! in the sandbox, without fuel, about 1.35x that. Of its own work (instruction counts, an
//! 8 MB prefix, line reading included): serde_json's string scanning about 20%, memcpy
//! about 10% (mostly moving the line's typed view through the parse; boxing its rarely
//! present parts saves only 2% of the instructions), the allocator about 9%.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The capture's end-to-end replay against a bare Python `json.loads` loop over the same
/// file, by wall time (MB/s: Python's seconds / ours): at least as fast.
const TARGET_RATIO: f64 = 1.0;
/// Peak RSS above a replay's start-up, per byte of the record it prints, at most: memory
/// follows what the turn keeps (the record in memory, and its JSON as it is written).
const RSS_PER_RECORD: f64 = 3.0;
/// Peak RSS above a replay's start-up, per byte of the stream's longest line, at most: the
/// copies of a line alive at once when lines are long (each batch between the threads is
/// then one line: up to six batches of lines, six of their events and four of spent
/// buffers, and the line in the guest's memory with what the reducer makes of it; measured
/// 4x to 8x on lines of 1 to 16 MiB, stop 28).
const RSS_PER_LONGEST_LINE: f64 = 12.0;
/// Peak RSS above a replay's start-up allowed whatever the record (bytes): the pipeline's
/// buffers (read buffers, the batches in flight between its threads, thread stacks).
const RSS_SLACK: u64 = 16 << 20;
/// The streams whose commands print much (file name, bytes each command prints).
const LONG_STREAMS: [(&str, usize); 2] = [
    ("long-results.jsonl", 16_000),
    ("long-lines.jsonl", 1 << 20),
];
/// Set in the child process that writes the streams.
const WRITE_STREAMS: &str = "REPLAY_E2E_WRITE_STREAMS";
/// Rounds (one replay, one Python loop each); the best of each side is kept.
const RUNS: usize = 5;

/// The lines of the real session: (head, repeated body, tail).
fn session_parts() -> (Vec<String>, Vec<String>, Vec<String>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/live/claude/hello.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    // 1: system init; 2-6: two model calls, each with a tool call and its result;
    // 7: the closing message; 8: the result.
    assert_eq!(lines.len(), 8, "{} changed shape", path.display());
    (
        lines[..1].to_vec(),
        lines[1..6].to_vec(),
        lines[6..].to_vec(),
    )
}

/// The real session made long: its head, then its body repeated with fresh message and
/// tool ids per copy until the lines reach `target_bytes`, then its tail; each command's
/// output padded with `output` more bytes. Returns the lines and the copies of the body.
fn session_lines(target_bytes: usize, output: usize) -> (Vec<String>, usize) {
    let (head, body, tail) = session_parts();
    let pad = "x".repeat(output);
    let mut lines: Vec<String> = head;
    let mut bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut copy = 0usize;
    while bytes < target_bytes {
        for line in &body {
            let mut line = line
                .replace("msg_mock_", &format!("msg_c{copy}_"))
                .replace("toolu_mock_", &format!("toolu_c{copy}_"));
            if output > 0 {
                line = line.replace(
                    r#""content":"Sun Nov 29 18:21:39 UTC 2026""#,
                    &format!(r#""content":"Sun Nov 29 18:21:39 UTC 2026 {pad}""#),
                );
            }
            bytes += line.len() + 1;
            lines.push(line);
        }
        copy += 1;
    }
    lines.extend(tail);
    (lines, copy)
}

/// Writes the stream (as a capture, and as a recording with stamps) and returns their
/// paths, the number of model calls and tool calls it holds.
fn write_streams(dir: &Path, target_bytes: usize) -> (PathBuf, PathBuf, usize) {
    let (lines, copy) = session_lines(target_bytes, 0);
    let capture = dir.join("long-session.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&capture).unwrap());
    for line in &lines {
        out.write_all(line.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    // The same lines as `coder-eval run` records them: a header, then one `out` record a
    // line, 1.5 ms apart, and the exit.
    let recording = dir.join("long-session.recording.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&recording).unwrap());
    writeln!(
        out,
        r#"{{"format":"coder-eval-recording","version":1,"harness":"claude-code","argv":["claude"]}}"#
    )
    .unwrap();
    let mut us = 0u64;
    for line in &lines {
        us += 1500;
        let text = serde_json::to_string(line).unwrap();
        writeln!(out, r#"{{"t":"out","us":{us},"text":{text}}}"#).unwrap();
    }
    writeln!(out, r#"{{"t":"exit","us":{},"code":0}}"#, us + 1000).unwrap();
    out.flush().unwrap();
    (capture, recording, copy * 2)
}

/// A capture of the same session whose every command prints `output` bytes (each tool
/// result's text padded), written to `name`: the record keeps an excerpt of each (4 KiB),
/// so it grows much slower than the input. Returns its path.
fn write_long_results(dir: &Path, name: &str, target_bytes: usize, output: usize) -> PathBuf {
    let (lines, _) = session_lines(target_bytes, output);
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Wall time and peak RSS (bytes) of one child, waited for (and reaped) with `wait4`,
/// which `Child::wait` cannot give.
#[allow(clippy::zombie_processes)]
fn measure(mut cmd: Command) -> (Duration, u64, f64, std::process::ExitStatus) {
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    let child = cmd.spawn().expect("spawn");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as i32;
    // SAFETY: plain syscall on our child's pid with valid out-pointers.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4");
    let elapsed = start.elapsed();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (
        elapsed,
        usage.ru_maxrss as u64 * 1024,
        secs(usage.ru_utime) + secs(usage.ru_stime),
        std::process::ExitStatus::from_raw(status),
    )
}

/// The best of [`RUNS`] runs of one side: least wall time and least CPU time (each the
/// least over the runs, not necessarily of one run), and the replay's peak RSS.
#[derive(Default)]
struct Best {
    seconds: f64,
    cpu: f64,
    rss: u64,
}

impl Best {
    fn add(&mut self, seconds: f64, cpu: f64, rss: u64) {
        let first = self.seconds == 0.0;
        self.seconds = if first {
            seconds
        } else {
            self.seconds.min(seconds)
        };
        self.cpu = if first { cpu } else { self.cpu.min(cpu) };
        self.rss = self.rss.max(rss);
    }
}

/// One `coder-eval replay --json` of `file` into `out`: (wall s, CPU s, peak RSS bytes).
fn replay_once(file: &Path, out: &Path) -> (f64, f64, u64) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coder-eval"));
    cmd.args(["replay", "--harness", "claude-code", "--json"])
        .arg(file)
        .stdout(Stdio::from(std::fs::File::create(out).unwrap()))
        .stderr(Stdio::inherit());
    let (elapsed, rss, cpu, status) = measure(cmd);
    assert!(
        status.success(),
        "replay of {} failed: {status}",
        file.display()
    );
    (elapsed.as_secs_f64(), cpu, rss)
}

/// One bare `json.loads` loop over the file's lines, timed inside Python (its start-up
/// excluded): (wall s, CPU s), `None` without python3.
fn python_once(file: &Path) -> Option<(f64, f64)> {
    let script = "import json, sys, time\n\
                  t = time.perf_counter()\n\
                  c = time.process_time()\n\
                  with open(sys.argv[1], 'rb') as f:\n    \
                      for line in f:\n        \
                          json.loads(line)\n\
                  print(time.perf_counter() - t, time.process_time() - c)\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(file)
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut figures = text.split_whitespace().map(str::parse::<f64>);
    match (figures.next(), figures.next()) {
        (Some(Ok(seconds)), Some(Ok(cpu))) => Some((seconds, cpu)),
        _ => None,
    }
}

/// [`RUNS`] rounds of one replay then one Python loop, interleaved so that a machine
/// whose speed drifts (a shared VM) disturbs both sides alike: the best of each.
fn race(file: &Path, out: &Path) -> (Best, Option<Best>) {
    let mut ours = Best::default();
    let mut python = Some(Best::default());
    for _ in 0..RUNS {
        let (seconds, cpu, rss) = replay_once(file, out);
        ours.add(seconds, cpu, rss);
        python = match (python, python_once(file)) {
            (Some(mut best), Some((seconds, cpu))) => {
                best.add(seconds, cpu, 0);
                Some(best)
            }
            _ => None,
        };
    }
    (ours, python)
}

fn main() {
    let mib: usize = std::env::var("REPLAY_E2E_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay-e2e");
    std::fs::create_dir_all(&dir).unwrap();
    // The streams are written by a child process (this binary again): a replay started
    // from here reports, as its peak RSS, at least this process's own at the start (the
    // kernel keeps the parent's high-water mark across the spawn's exec), so this process
    // must not have held the streams.
    if std::env::var_os(WRITE_STREAMS).is_some() {
        let (_, _, calls) = write_streams(&dir, mib << 20);
        for (name, output) in LONG_STREAMS {
            write_long_results(&dir, name, mib << 20, output);
        }
        println!("{calls}");
        return;
    }
    let written = Command::new(std::env::current_exe().unwrap())
        .env(WRITE_STREAMS, "1")
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(written.status.success(), "writing the streams failed");
    let calls: usize = String::from_utf8_lossy(&written.stdout)
        .trim()
        .parse()
        .unwrap();
    let capture = dir.join("long-session.jsonl");
    let recording = dir.join("long-session.recording.jsonl");
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let mb = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!(
        "one Claude Code session: {calls} model calls and {calls} tool calls; capture {:.1} MiB, \
         recording {:.1} MiB",
        mb(size(&capture)),
        mb(size(&recording))
    );
    let record_path = dir.join("record.json");
    let mut failed = Vec::new();
    // What a replay holds before its first line (the engine, the component): a stream of
    // one session's first lines.
    let tiny = dir.join("tiny.jsonl");
    let (head, _, tail) = session_parts();
    std::fs::write(
        &tiny,
        head.into_iter().chain(tail).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let (_, _, base_rss) = replay_once(&tiny, &record_path);
    for (form, file) in [("capture", &capture), ("recording", &recording)] {
        let input = size(file);
        let (ours, python) = race(file, &record_path);
        let record = size(&record_path);
        let rate = mb(input) / ours.seconds;
        println!(
            "{:<42} {:7.1} MB/s {:6.0} ms  peak RSS {:6.1} MiB ({:.2}x the input; the record is {:.1} MiB)",
            format!("coder-eval replay --json ({form})"),
            rate,
            ours.seconds * 1e3,
            mb(ours.rss),
            ours.rss as f64 / input as f64,
            mb(record),
        );
        let Some(py) = python else {
            println!("  (python3 not found: no baseline)");
            continue;
        };
        let wall = py.seconds / ours.seconds;
        println!(
            "{:<42} {:7.1} MB/s {:6.0} ms  python json.loads; {wall:.2}x python by wall time",
            "",
            mb(input) / py.seconds,
            py.seconds * 1e3,
        );
        println!(
            "{:<42} cpu {:6.0} ms, python {:6.0} ms: {:.2}x python by cpu time (both threads)",
            "",
            ours.cpu * 1e3,
            py.cpu * 1e3,
            py.cpu / ours.cpu,
        );
        if form == "capture" && wall < TARGET_RATIO {
            failed.push(format!(
                "{form}: {wall:.2}x python by wall time is under the {TARGET_RATIO}x target"
            ));
        }
        memory(
            &mut failed,
            form,
            ours.rss,
            base_rss,
            record,
            input,
            longest_line(file),
        );
    }
    // Memory that follows the record, not the input: sessions whose commands print 16 KB
    // and 1 MiB each, of which the record keeps 4 KiB excerpts.
    for (name, output) in LONG_STREAMS {
        let long = dir.join(name);
        let (seconds, _, rss) = replay_once(&long, &record_path);
        let (input, record) = (size(&long), size(&record_path));
        let form = format!("long results, {} KiB each", output >> 10);
        println!(
            "{:<42} {:7.1} MB/s {:6.0} ms  peak RSS {:6.1} MiB ({:.2}x the input; the record is {:.1} MiB)",
            format!("coder-eval replay --json ({form})"),
            mb(input) / seconds,
            seconds * 1e3,
            mb(rss),
            rss as f64 / input as f64,
            mb(record),
        );
        memory(
            &mut failed,
            &form,
            rss,
            base_rss,
            record,
            input,
            longest_line(&long),
        );
    }
    let _ = std::fs::remove_file(&record_path);
    if failed.is_empty() {
        println!(
            "PASS: end-to-end replay of the capture at or above {TARGET_RATIO}x python by wall \
             time; peak RSS above start-up within {RSS_PER_RECORD}x the record + \
             {RSS_PER_LONGEST_LINE}x the longest line + {} MiB",
            RSS_SLACK >> 20
        );
    } else {
        for f in &failed {
            println!("FAIL: {f}");
        }
        std::process::exit(1);
    }
}

/// The length of `path`'s longest line, in bytes, read a line at a time (this process must
/// not hold the stream: its peak RSS would count in every later replay's, see `main`).
fn longest_line(path: &Path) -> u64 {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let (mut line, mut longest) = (Vec::new(), 0);
    while reader.read_until(b'\n', &mut line).unwrap() > 0 {
        longest = longest.max(line.strip_suffix(b"\n").unwrap_or(&line).len() as u64);
        line.clear();
    }
    longest
}

/// Adds a failure when the replay's peak RSS above start-up (`base`) is past
/// [`RSS_PER_RECORD`] times its record plus [`RSS_PER_LONGEST_LINE`] times its longest
/// line plus [`RSS_SLACK`] (bytes).
fn memory(
    failed: &mut Vec<String>,
    form: &str,
    rss: u64,
    base: u64,
    record: u64,
    input: u64,
    longest: u64,
) {
    let held = rss.saturating_sub(base) as f64;
    let allowed =
        RSS_PER_RECORD * record as f64 + RSS_PER_LONGEST_LINE * longest as f64 + RSS_SLACK as f64;
    if held > allowed {
        failed.push(format!(
            "{form}: peak RSS {:.1} MiB ({:.1} MiB above start-up) for a {:.1} MiB record of a \
             {:.1} MiB input whose longest line is {:.1} KiB: over {RSS_PER_RECORD}x the record \
             + {RSS_PER_LONGEST_LINE}x the longest line + {} MiB",
            rss as f64 / 1048576.0,
            held / 1048576.0,
            record as f64 / 1048576.0,
            input as f64 / 1048576.0,
            longest as f64 / 1024.0,
            RSS_SLACK >> 20,
        ));
    }
}
