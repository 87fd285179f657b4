//! Command-line interface: one file per subcommand, doc comments as help.

pub(crate) mod check;
mod compare;
mod export;
mod grade;
mod harnesses;
mod replay;
mod run;
mod scripted_model;
mod view;

use clap::{Parser, Subcommand};
use coder_eval::exit_codes;

/// Evaluates coding-agent CLIs: runs them on task files, records what they stream, and
/// grades the result. Reducers and graders are sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "coder-eval", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(Box<run::RunArgs>),
    #[command(mut_arg("out", |a| a.help("The plan file to write (plan.json)").value_name("PLAN.json")))]
    // `run`'s options that a plan refuses (it resolves a new suite) are not plan's.
    #[command(mut_arg("resume", |a| a.hide(true)), mut_arg("plan", |a| a.hide(true)))]
    #[command(mut_arg("shard", |a| a.hide(true)), mut_arg("shard_from_env", |a| a.hide(true)))]
    #[command(mut_arg("shard_count", |a| a.hide(true)))]
    Plan(Box<run::PlanArgs>),
    Merge(run::MergeArgs),
    Check(check::CheckArgs),
    Compare(compare::CompareArgs),
    Export(export::ExportArgs),
    Replay(replay::ReplayArgs),
    Grade(grade::GradeArgs),
    ScriptedModel(scripted_model::ScriptedModelArgs),
    Harnesses(harnesses::HarnessesArgs),
    View(view::ViewArgs),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                exit_codes::USAGE
            } else {
                exit_codes::OK
            };
        }
    };
    let result = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Plan(args) => run::plan(*args),
        Command::Merge(args) => run::merge(args),
        Command::Check(args) => check::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Export(args) => export::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Grade(args) => grade::run(args),
        Command::ScriptedModel(args) => scripted_model::run(args),
        Command::Harnesses(args) => harnesses::run(args),
        Command::View(args) => view::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            print_error(err.as_ref());
            exit_codes::USAGE
        }
    }
}

/// Ends the process after writing stdout failed: quietly with [`exit_codes::OK`] for a
/// closed pipe (`| head`: the reader has what it wanted), else with the error on stderr and
/// [`exit_codes::INFRA`] (a full disk, `> /dev/full`: the output is incomplete).
fn stdout_failed(err: &std::io::Error) -> ! {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(exit_codes::OK);
    }
    eprintln!("error: could not write the output to stdout: {err}");
    std::process::exit(exit_codes::INFRA);
}

/// Writes to stdout; a closed pipe (`| head`) ends quietly, another failure ends the
/// process with an error ([`stdout_failed`]).
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(err) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        stdout_failed(&err);
    }
}

/// Stdout, buffered (a concrete type: serializing makes many small writes, each a direct
/// call).
type BufferedStdout = std::io::BufWriter<std::io::StdoutLock<'static>>;

/// Runs `write` on a buffered stdout and flushes it; a closed pipe (`| head`) ends quietly,
/// another failure ends the process with an error ([`stdout_failed`]).
fn write_stdout(write: impl FnOnce(&mut BufferedStdout) -> std::io::Result<()>) {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if let Err(err) = write(&mut out).and_then(|()| out.flush()) {
        stdout_failed(&err);
    }
}

/// Writes `value` as pretty JSON and a newline to stdout, as it is serialized (no copy of
/// the whole text in memory), through [`write_stdout`].
pub fn print_json<T: serde::Serialize>(value: &T) {
    write_stdout(|out| {
        use std::io::Write;
        serde_json::to_writer_pretty(&mut *out, value)?;
        out.write_all(b"\n")
    });
}

/// [`print_json`] for a turn record, its long lists rendered on two threads
/// ([`coder_eval::results::write_turn_record_pretty`]): the same bytes.
pub fn print_turn_record_json(record: &mut coder_eval::results::TurnRecord) {
    write_stdout(|out| coder_eval::results::write_turn_record_pretty(out, record));
}

/// Prints `err` and its causes on stderr, one per line; a cause whose text the line above
/// already holds (a wrapper that quotes its source) is not repeated.
pub fn print_error(err: &dyn std::error::Error) {
    let mut shown = err.to_string();
    eprintln!("error: {shown}");
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !shown.contains(&text) {
            eprintln!("  caused by: {text}");
        }
        shown = text;
        source = cause.source();
    }
}
