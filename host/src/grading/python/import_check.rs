//! `import_check`: the Python program it runs and the grading of its output (the
//! criterion is described in the parent module's doc). Parameters are parsed and checked
//! in the parent.

use super::exec::{self, CommandEnv, quote, stream};
use super::{ImportCheck, Outcome, error, parse};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// The Python program `import_check` runs: argv[1] is the file; prints one JSON object.
const IMPORT_CHECK_PY: &str = r#"
import ast, importlib.util, json, sys
path = sys.argv[1]
try:
    with open(path, encoding="utf-8") as f:
        source = f.read()
except OSError as e:
    print(json.dumps({"missing": str(e)})); sys.exit(0)
try:
    tree = ast.parse(source, filename=path)
except SyntaxError as e:
    print(json.dumps({"syntax_error": str(e)})); sys.exit(0)
modules = []
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names = [node.module]
    else:
        continue
    for name in names:
        if name not in modules:
            modules.append(name)
sys.path.insert(0, ".")
resolved = {}
for m in modules:
    try:
        resolved[m] = importlib.util.find_spec(m) is not None
    except Exception:
        resolved[m] = False
print(json.dumps({"modules": modules, "resolved": resolved}))
"#;

/// Runs the `import_check` criterion in `workspace`. Params must have passed
/// [`validate_import_check`].
pub(crate) async fn grade_import_check(
    params: &Map<String, Value>,
    workspace: &Path,
    env: &CommandEnv<'_>,
) -> Outcome {
    let p: ImportCheck = match parse(params) {
        Ok(p) => p,
        Err(e) => return error("invalid_criterion", e, String::new()),
    };
    if !workspace.join(&p.path).is_file() {
        return error(
            "missing_file",
            format!("file `{}` does not exist", p.path),
            String::new(),
        );
    }
    let command = format!(
        "py=$(command -v python3 || command -v python) || {{ echo 'no python3 or python on PATH' >&2; exit 127; }}; \
         exec \"$py\" -c {} {}",
        quote(IMPORT_CHECK_PY),
        quote(&p.path)
    );
    let out = match exec::run(
        &command,
        workspace,
        env,
        Duration::try_from_secs_f64(p.timeout).unwrap_or(Duration::MAX),
    )
    .await
    {
        Ok(out) => out,
        Err(e) => {
            return error(
                "spawn",
                format!("could not start python: {e}"),
                String::new(),
            );
        }
    };
    let raw = format!(
        "exit code: {}\n{}",
        exec::exit_text(&out),
        stream("stderr", &out.stderr)
    );
    if out.timed_out {
        return error(
            "timeout",
            format!(
                "import_check of `{}` timed out after {} s",
                p.path, p.timeout
            ),
            raw,
        );
    }
    let Some(report) = out
        .stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
    else {
        return error(
            "spawn",
            format!(
                "python did not report on `{}` (is python3 on PATH?)",
                p.path
            ),
            raw,
        );
    };
    if let Some(e) = report.get("syntax_error").and_then(Value::as_str) {
        return error(
            "syntax_error",
            format!("syntax error in `{}`: {e}", p.path),
            String::new(),
        );
    }
    if let Some(e) = report.get("missing").and_then(Value::as_str) {
        return error(
            "missing_file",
            format!("cannot read `{}`: {e}", p.path),
            String::new(),
        );
    }
    let modules: Vec<String> = report["modules"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if modules.is_empty() {
        return Outcome {
            score: 1.0,
            details: format!("`{}`: no imports to check", p.path),
            error: None,
        };
    }
    let failed: Vec<&String> = modules
        .iter()
        .filter(|m| report["resolved"][m.as_str()] != Value::Bool(true))
        .collect();
    let ok = modules.len() - failed.len();
    let mut details = format!(
        "`{}`: checked {}, resolved {ok}/{}",
        p.path,
        modules.len(),
        modules.len()
    );
    if !failed.is_empty() {
        details.push_str(&format!(
            "; failed: {}",
            failed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Outcome {
        score: ok as f64 / modules.len() as f64,
        details,
        error: None,
    }
}
