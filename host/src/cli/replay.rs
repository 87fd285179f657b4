//! `coder-eval replay`.

use super::{print_json, print_stdout, print_turn_record_json};
use coder_eval::components::{ComponentSource, parse_override};
use coder_eval::exit_codes;
use coder_eval::limits::Caps;
use coder_eval::results::TurnRecord;
use coder_eval::turn::replay::{ReplayOptions, replay};
use std::path::PathBuf;

/// Replays a recording (or a plain stdout JSONL capture) through a harness's reducer and
/// prints the turn record. The same input gives byte-identical output on every run, as
/// long as the reducer stays inside its per-call deadline (2 s a call plus 1 s per MiB of
/// input, a wall-clock bound: a call that passes it fails the reducer, which depends on
/// the machine's speed and load; nothing bounds the whole replay). A
/// time-budget run's first recording (`recording.jsonl` with `recording.session-N.jsonl`
/// beside it) replays every session: `--json` then prints `{"sessions": [{"index",
/// "recording", "turn"}, …]}`, one turn record per session in order (the last is
/// `task.json`'s `turn`). Exit code: 0 replayed, 1 the reducer failed (the partial record
/// is printed), 2 bad invocation or unreadable input.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval replay runs/x/hello_date/claude-code/recording.jsonl --harness claude-code --json
  coder-eval replay capture.jsonl --harness claude-code --components ./my-components
  coder-eval replay capture.jsonl --harness claude-code --component claude-code=fixed.wasm
  coder-eval replay tests/corpus/live/continue/hello.jsonl --harness continue \\
    --side-file '{{home}}/.continue/sessions/coder-eval.json=tests/corpus/live/continue/hello.session.json'")]
pub struct ReplayArgs {
    /// The recording or plain capture.
    file: PathBuf,
    /// The harness whose reducer reads the stream (default: the recording header's;
    /// required for a plain capture).
    #[arg(long)]
    harness: Option<String>,
    /// A folder of replacement components (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// Replace one harness's component: NAME=PATH (repeatable).
    #[arg(long, value_name = "NAME=PATH", value_parser = parse_override)]
    component: Vec<(String, PathBuf)>,
    /// Judge the run by this max_turns (default: the recording header's).
    #[arg(long)]
    max_turns: Option<u32>,
    /// Print the turn record as JSON (the documented machine output).
    #[arg(long)]
    json: bool,
    /// Hand a side file to the reducer after the last line, as a live run does once the
    /// CLI exited: PATH as the launch plan names it (`coder-eval harnesses` does not list
    /// it; Continue's is `{{home}}/.continue/sessions/coder-eval.json`), FILE its content
    /// (repeatable). For a plain capture: a recording made by `run` holds its own.
    #[arg(long, value_name = "PATH=FILE", value_parser = parse_override)]
    side_file: Vec<(String, PathBuf)>,
}

pub fn run(mut args: ReplayArgs) -> Result<i32, Box<dyn std::error::Error>> {
    // The file is read more than once (its header, then the replay): a pipe (`<(…)`,
    // `/dev/stdin`) is copied to a temporary file first, read once.
    let _copy = match std::fs::metadata(&args.file) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => {
            let mut copy = tempfile::NamedTempFile::new()?;
            std::io::copy(&mut std::fs::File::open(&args.file)?, copy.as_file_mut())?;
            args.file = copy.path().to_path_buf();
            Some(copy)
        }
        _ => None,
    };
    let recorded = coder_eval::turn::recording::read_header(&args.file)?.and_then(|h| h.harness);
    let harness = match (args.harness, recorded) {
        (Some(given), Some(recorded)) if given != recorded => {
            eprintln!(
                "error: {} was recorded with the `{recorded}` harness, not `{given}`",
                args.file.display()
            );
            return Ok(exit_codes::USAGE);
        }
        (Some(given), _) => given,
        (None, Some(recorded)) => recorded,
        (None, None) => {
            eprintln!(
                "error: {} is a plain capture: say which harness produced it with --harness",
                args.file.display()
            );
            return Ok(exit_codes::USAGE);
        }
    };
    let mut options = ReplayOptions::new(&harness);
    options.components = ComponentSource {
        dir: args.components,
        overrides: args.component.into_iter().collect(),
    };
    for (path, file) in args.side_file {
        match std::fs::read(&file) {
            Ok(content) => options.side_files.push((path, Some(content))),
            Err(err) => {
                eprintln!("error: --side-file {}: {err}", file.display());
                return Ok(exit_codes::USAGE);
            }
        }
    }
    if let Some(n) = args.max_turns {
        options.caps = Some(Caps {
            max_turns: Some(n),
            max_tool_calls: None,
        });
    }
    if coder_eval::turn::replay::session_recordings(&args.file).len() > 1 {
        return sessions(&args.file, &options, args.json);
    }
    let mut record = replay(&args.file, &options)?;
    if args.json {
        print_turn_record_json(&mut record);
    } else {
        print_stdout(&summary(&record));
    }
    let code = if record.reducer_error.is_some() {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    };
    // The process ends once the record is printed: its memory is left to the OS rather
    // than freed allocation by allocation (a long session's record is hundreds of
    // thousands of them).
    std::mem::forget(record);
    Ok(code)
}

/// Every session of a time-budget run, from its first recording.
fn sessions(
    file: &std::path::Path,
    options: &ReplayOptions,
    json: bool,
) -> Result<i32, Box<dyn std::error::Error>> {
    let (sessions, _) = coder_eval::turn::replay::replay_sessions(file, options, false)?;
    if json {
        print_json(&serde_json::json!({ "sessions": sessions }));
    } else {
        let mut text = String::new();
        for s in &sessions {
            text += &format!("session {} ({})\n", s.index, s.recording.display());
            text += &summary(&s.turn);
        }
        print_stdout(&text);
    }
    Ok(if sessions.iter().any(|s| s.turn.reducer_error.is_some()) {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    })
}

/// A short human summary of a turn record.
fn summary(r: &TurnRecord) -> String {
    let t = &r.timing;
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut s = format!(
        "{} ({}), session {}\nstatus {:?}, num_turns {}{}, tool calls {}, diagnostics {}\n",
        r.harness,
        r.component,
        r.session_id.as_deref().unwrap_or("-"),
        r.final_status,
        r.num_turns,
        if r.max_turns_exhausted {
            " (max_turns exhausted)"
        } else {
            ""
        },
        r.tool_calls.len(),
        r.diagnostics.len(),
    );
    s += &format!(
        "time {} ms = head {} + generation {} + tools {} + tail {}\n",
        t.turn_duration_ms,
        opt(t.harness_startup_ms),
        opt(t.generation_duration_ms),
        opt(t.tool_union_ms),
        opt(t.harness_teardown_ms)
    );
    let cost = r
        .cost_usd
        .map_or("not reported".into(), |c| format!("${c:.4}"));
    s += &match r.usage {
        Some(u) => format!(
            "tokens in {} out {} cache-read {} cache-write {}, cost {cost}\n",
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens
                .map_or("not reported".into(), |n| n.to_string()),
        ),
        None => format!("tokens not reported, cost {cost}\n"),
    };
    for tool in &r.tool_calls {
        s += &format!(
            "  tool {} {:?} ({} ms)\n",
            tool.name, tool.status, tool.duration_ms
        );
    }
    if let Some(err) = &r.reducer_error {
        s += &format!("reducer failed: {}\n", err.message);
    }
    s
}
