//! `coder-eval export`.

use coder_eval::components::ComponentSource;
use coder_eval::exit_codes;
use coder_eval::export::{atif, run_dir};
use coder_eval::results::write_atomically;
use std::path::PathBuf;

/// Writes a finished run in another tool's format, beside each run's `task.json`:
/// `--format atif` writes Harbor's Agent Trajectory Interchange Format (ATIF-v1.7) as
/// `trajectory.json`, one per task × harness (× variant × replicate), sub-agents embedded.
/// The recordings are replayed (deterministically) for the events; nothing else of the
/// run changes. Exit code: 0 every run exported, 1 some could not be (each named on
/// stderr), 2 the run folder cannot be read.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  coder-eval export --format atif runs/nightly
  coder-eval export --format atif runs/nightly --components ./my-components")]
pub struct ExportArgs {
    /// The run folder (holding run.json).
    run_dir: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    format: Format,
    /// The folder of replacement components the run used (`<harness>.wasm`).
    #[arg(long, value_name = "DIR")]
    components: Option<PathBuf>,
}

/// Export formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Harbor's Agent Trajectory Interchange Format, ATIF-v1.7 (`trajectory.json`).
    Atif,
}

pub fn run(args: ExportArgs) -> Result<i32, Box<dyn std::error::Error>> {
    let Format::Atif = args.format;
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
