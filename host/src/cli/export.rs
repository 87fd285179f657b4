//! `coder-eval export`.

use coder_eval::components::ComponentSource;
use coder_eval::exit_codes;
use coder_eval::export::{atif, run_dir};
use coder_eval::results::write_atomically;
use std::path::PathBuf;

/// Exports a finished run. `--format atif` writes Harbor's Agent Trajectory Interchange
/// Format (ATIF-v1.7) beside each run's `task.json` as `trajectory.json`, one per task ×
/// harness (× variant × replicate), sub-agents embedded; the recordings are replayed
/// (deterministically) for the events. `--format otlp --endpoint URL` sends one
/// OpenTelemetry trace per run to an OTLP/HTTP collector (spans for setup, the agent, each
/// model call, each tool call and grading, with their recorded times; GenAI semantic
/// conventions). Nothing of the run changes. Exit code: 0 every run exported, 1 some could
/// not be (each named on stderr), 2 the run folder cannot be read or no endpoint given.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval export --format atif runs/nightly
  coder-eval export --format atif runs/nightly --components ./my-components
  coder-eval export --format otlp --endpoint http://127.0.0.1:4318 runs/nightly")]
pub struct ExportArgs {
    /// The run folder (holding run.json).
    run_dir: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    format: Format,
    /// The folder of replacement components the run used (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
    /// `--format otlp`: the collector's OTLP/HTTP base URL (`/v1/traces` is added unless
    /// the URL ends with it); default: `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[arg(long, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    endpoint: Option<String>,
}

/// Export formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Harbor's Agent Trajectory Interchange Format, ATIF-v1.7 (`trajectory.json`).
    Atif,
    /// OpenTelemetry traces over OTLP/HTTP (`--endpoint`).
    Otlp,
}

pub fn run(args: ExportArgs) -> Result<i32, Box<dyn std::error::Error>> {
    if let Format::Otlp = args.format {
        let Some(endpoint) = &args.endpoint else {
            eprintln!("error: --format otlp needs --endpoint URL (an OTLP/HTTP collector)");
            return Ok(exit_codes::USAGE);
        };
        if let Err(err) = coder_eval::export::otlp::check_endpoint(endpoint) {
            eprintln!("error: --endpoint: {err}");
            return Ok(exit_codes::USAGE);
        }
        return otlp(&args.run_dir, endpoint, args.components);
    }
    let units = match run_dir::units(&args.run_dir) {
        Ok(units) => units,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(exit_codes::USAGE);
        }
    };
    let components = ComponentSource {
        dir: args.components,
        overrides: Default::default(),
    };
    let mut failed = 0;
    for task_json in units {
        let written = run_dir::load(&task_json, &components).and_then(|unit| {
            let id = unit
                .dir
                .strip_prefix(&args.run_dir)
                .unwrap_or(&unit.dir)
                .to_string_lossy()
                .into_owned();
            let trajectory =
                atif::trajectory(&unit.result, &unit.events, &id, unit.started_unix_ms);
            let path = unit.dir.join("trajectory.json");
            let mut bytes =
                serde_json::to_vec_pretty(&trajectory).map_err(|e| run_dir::ExportError::Read {
                    path: path.clone(),
                    message: format!("cannot serialize: {e}"),
                })?;
            bytes.push(b'\n');
            write_atomically(&path, &bytes).map_err(|e| run_dir::ExportError::Read {
                path: path.clone(),
                message: format!("cannot write: {e}"),
            })?;
            Ok(path)
        });
        match written {
            Ok(path) => super::print_stdout(&format!("wrote {}\n", path.display())),
            Err(err) => {
                failed += 1;
                eprintln!("error: {err}");
            }
        }
    }
    Ok(if failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}

/// `--format otlp`: every run of `run_dir` to the collector at `endpoint`.
pub fn otlp(
    run_dir: &std::path::Path,
    endpoint: &str,
    components: Option<PathBuf>,
) -> Result<i32, Box<dyn std::error::Error>> {
    let paths = match run_dir::units(run_dir) {
        Ok(paths) => paths,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(exit_codes::USAGE);
        }
    };
    let components = ComponentSource {
        dir: components,
        overrides: Default::default(),
    };
    let mut failed = 0;
    let mut units = Vec::new();
    for path in paths {
        match run_dir::load(&path, &components) {
            Ok(unit) => units.push(unit),
            Err(err) => {
                failed += 1;
                eprintln!("error: {err}");
            }
        }
    }
    match coder_eval::export::otlp::send(&units, endpoint) {
        Ok(sent) => {
            for (run, why) in &sent.skipped {
                eprintln!("error: {run} not sent: {why}");
            }
            for run in &sent.not_run {
                eprintln!("note: {run}: no CLI ran, nothing to trace");
            }
            super::print_stdout(&format!(
                "sent {} trace(s), {} span(s) to {}\n",
                sent.traces,
                sent.spans,
                coder_eval::export::otlp::shown(&coder_eval::export::otlp::traces_url(endpoint))
            ));
            if !sent.skipped.is_empty() {
                failed += sent.skipped.len();
            }
        }
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(exit_codes::FAILED);
        }
    }
    Ok(if failed == 0 {
        exit_codes::OK
    } else {
        exit_codes::FAILED
    })
}
