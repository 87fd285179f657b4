//! `reference_comparison`: the agent's Python file against one file of the task's
//! reference solution (`reference: {directory}`), with coder_eval's parameters and
//! scoring.
//!
//! Params: `agent_file` (workspace-relative, may be a glob matching exactly one file),
//! `reference_file` (relative to the reference directory, must stay inside it; coder_eval's
//! older form has none: then the reference must be one file — `reference: {file}` or
//! `{code}` —, or a directory holding exactly one),
//! `comparison_method` (`ast` default, `token`, `complexity`), `similarity_threshold`
//! (0–1, default 0.8; it **is** the criterion's `pass_threshold`, as in coder_eval).
//!
//! Scores (0–1), as coder_eval computes them:
//! - `ast`: `difflib.SequenceMatcher` ratio of the two sequences of AST node type names
//!   in `ast.walk` order;
//! - `token`: the same ratio over the `tokenize` token type names (so names and literals
//!   do not matter);
//! - `complexity`: `0.5·cyclomatic + 0.3·loc + 0.2·functions`, where `cyclomatic` and
//!   `loc` are `max(0, 1 − min(1, agent / (reference·1.5)))` and `functions` is
//!   `max(0, 1 − |agent − reference| / max(reference, 1))`. coder_eval measures these
//!   with `radon`; when `radon` is importable by the `python3` on the task's `PATH` it is
//!   used here too, else a stdlib reimplementation of radon's rules (cyclomatic: 1 + one
//!   per `if`/`elif`/`for`/`while`/`except`/`with`/`assert`/comprehension `for` and `if`/
//!   conditional expression/`match` case, plus `len(values) − 1` per boolean operator,
//!   summed over functions, methods and classes; loc: the number of lines), which agrees
//!   with radon on ordinary code; the details say which one measured.
//!
//! The comparison runs in `python3 -I` (stdlib `ast`, `tokenize`, `difflib`: parsing
//! only, nothing of the agent's code is executed) in a scratch folder, with the minimal
//! environment of [`super::exec`], a timeout (`limits::REFERENCE_COMPARISON_TIMEOUT`, 30 s) and
//! its process group stopped after.
//! A file that does not parse, a missing file or no reference scores 0 with an error.
//!
//! The params are parsed and checked once, as the task file is read ([`Params::parse`]);
//! grading runs from the typed value.

use super::exec::{self, CommandEnv, quote};
use crate::limits::REFERENCE_COMPARISON_TIMEOUT;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub(crate) use super::run_command::Outcome;

/// `reference_comparison`'s parameters, parsed and checked once, at load
/// ([`Params::parse`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Params {
    agent_file: String,
    #[serde(default)]
    reference_file: Option<String>,
    #[serde(default = "ast")]
    comparison_method: String,
    #[serde(default = "point_eight")]
    similarity_threshold: f64,
}

fn ast() -> String {
    "ast".into()
}
fn point_eight() -> f64 {
    0.8
}

impl Params {
    /// Parses and checks the params. Errors: an unknown or ill-typed key, an `agent_file`
    /// that leaves the workspace, a `reference_file` that leaves the reference directory,
    /// an unknown `comparison_method`, a `similarity_threshold` outside 0–1.
    pub(crate) fn parse(params: &Map<String, Value>) -> Result<Params, String> {
        let p: Params =
            serde_json::from_value(Value::Object(params.clone())).map_err(|e| e.to_string())?;
        criteria_common::check_path("agent_file", &p.agent_file)?;
        if let Some(rf) = &p.reference_file {
            grader_kit::check_relative(rf).map(drop).map_err(|e| {
                format!("reference_file: {e} (it must stay inside reference.directory)")
            })?;
        }
        if !matches!(p.comparison_method.as_str(), "ast" | "token" | "complexity") {
            return Err(format!(
                "comparison_method must be ast, token or complexity, got `{}`",
                p.comparison_method
            ));
        }
        if !(0.0..=1.0).contains(&p.similarity_threshold) {
            return Err(format!(
                "similarity_threshold must be between 0 and 1, got {}",
                p.similarity_threshold
            ));
        }
        Ok(p)
    }

    /// The `similarity_threshold` (0–1), which becomes the criterion's `pass_threshold`.
    pub(crate) fn pass_threshold(&self) -> f64 {
        self.similarity_threshold
    }
}

/// The Python program: argv = method, agent file, reference file; prints one JSON line.
const COMPARE_PY: &str = r#"
import ast, difflib, io, json, sys, tokenize
method, agent_path, ref_path = sys.argv[1:4]
def read(p):
    with open(p, encoding="utf-8") as f:
        return f.read()
def nodes(src):
    return [type(n).__name__ for n in ast.walk(ast.parse(src))]
def tokens(src):
    out = []
    try:
        for t in tokenize.tokenize(io.BytesIO(src.encode()).readline):
            out.append(tokenize.tok_name[t.type])
    except tokenize.TokenError:
        pass
    return out
def ratio(a, b):
    return difflib.SequenceMatcher(None, a, b).ratio()
class CC(ast.NodeVisitor):
    # A function, method or class block's complexity, radon's rules.
    def __init__(self):
        self.blocks = []
    def block(self, node):
        score = 1
        for sub in ast.walk(node):
            if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(sub, (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.With, ast.AsyncWith, ast.Assert)):
                score += 1
            elif isinstance(sub, ast.comprehension):
                score += 1 + len(sub.ifs)
            elif isinstance(sub, ast.BoolOp):
                score += len(sub.values) - 1
            elif hasattr(ast, "match_case") and isinstance(sub, ast.match_case):
                score += 1
        return score
    def visit_FunctionDef(self, node):
        self.blocks.append(self.block(node)); self.generic_visit(node)
    visit_AsyncFunctionDef = visit_FunctionDef
    def visit_ClassDef(self, node):
        self.blocks.append(self.block(node)); self.generic_visit(node)
def metrics(src):
    try:
        from radon.complexity import cc_visit
        from radon.raw import analyze
        blocks = cc_visit(src)
        return {"cyclomatic": sum(b.complexity for b in blocks), "loc": analyze(src).loc, "functions": len(blocks), "by": "radon"}
    except ImportError:
        v = CC(); v.visit(ast.parse(src))
        return {"cyclomatic": sum(v.blocks), "loc": len(src.splitlines()), "functions": len(v.blocks), "by": "stdlib"}
try:
    agent, ref = read(agent_path), read(ref_path)
    if method == "ast":
        out = {"score": ratio(nodes(agent), nodes(ref))}
    elif method == "token":
        out = {"score": ratio(tokens(agent), tokens(ref))}
    else:
        a, r = metrics(agent), metrics(ref)
        cc = max(0.0, 1.0 - min(1.0, a["cyclomatic"] / (r["cyclomatic"] * 1.5))) if r["cyclomatic"] else (1.0 if a["cyclomatic"] == 0 else 0.0)
        loc = max(0.0, 1.0 - min(1.0, a["loc"] / (r["loc"] * 1.5))) if r["loc"] else (1.0 if a["loc"] == 0 else 0.0)
        fn = max(0.0, 1.0 - abs(a["functions"] - r["functions"]) / max(r["functions"], 1))
        out = {"score": 0.5 * cc + 0.3 * loc + 0.2 * fn, "agent": a, "reference": r,
               "parts": {"cyclomatic": cc, "loc": loc, "functions": fn}}
except SyntaxError as e:
    out = {"error": "syntax_error", "message": "%s does not parse: %s" % ("the agent file" if e.filename in (None, "<unknown>") else e.filename, e)}
except Exception as e:
    out = {"error": "comparison_failed", "message": "%s: %s" % (type(e).__name__, e)}
print(json.dumps(out))
"#;

fn error(kind: &str, message: String) -> Outcome {
    Outcome {
        score: 0.0,
        details: message.clone(),
        error: Some((kind.to_string(), message)),
    }
}

/// Compares in a scratch folder. `workspace` holds `agent_file`; `reference_dir` is the
/// task's reference directory (None: the task has no `reference:`).
pub(crate) async fn grade(
    p: &Params,
    workspace: &Path,
    reference_dir: Option<&Path>,
    env: &CommandEnv<'_>,
) -> Outcome {
    let Some(reference_dir) = reference_dir else {
        return error(
            "no_reference",
            "the task has no reference (add `reference: {directory: ...}` to the task file)".into(),
        );
    };
    let agent: PathBuf = match agent_target(workspace, &p.agent_file) {
        Ok(path) => path,
        Err(why) => return error("missing_file", why),
    };
    let reference = match &p.reference_file {
        Some(rf) => {
            let path = reference_dir.join(rf);
            if !path.is_file() {
                return error(
                    "missing_file",
                    format!("reference file `{rf}` does not exist"),
                );
            }
            path
        }
        None if reference_dir.is_file() => reference_dir.to_path_buf(),
        None => match super::judge::reference_files(reference_dir).as_slice() {
            [one] => reference_dir.join(one),
            files => {
                return error(
                    "missing_file",
                    format!(
                        "no reference_file given and the reference holds {} files (name one \
                         with reference_file)",
                        files.len()
                    ),
                );
            }
        },
    };
    let scratch = std::env::temp_dir();
    let command = format!(
        "exec python3 -I -c {} {} {} {}",
        quote(COMPARE_PY),
        quote(&p.comparison_method),
        quote(&agent.display().to_string()),
        quote(&reference.display().to_string())
    );
    let out = match exec::run(&command, &scratch, env, REFERENCE_COMPARISON_TIMEOUT).await {
        Ok(out) => out,
        Err(e) => return error("spawn", format!("could not start python3: {e}")),
    };
    if out.timed_out {
        return error(
            "timeout",
            format!(
                "the comparison timed out after {} s",
                REFERENCE_COMPARISON_TIMEOUT.as_secs()
            ),
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
                "python3 did not report (exit {}; is python3 on PATH?): {}",
                exec::exit_text(&out),
                out.stderr.trim()
            ),
        );
    };
    if let Some(kind) = report.get("error").and_then(Value::as_str) {
        let message = report["message"].as_str().unwrap_or("").to_string();
        return error(
            kind,
            message.replace(&reference_dir.display().to_string(), "$REFERENCE_DIR"),
        );
    }
    let Some(score) = report["score"].as_f64().filter(|s| s.is_finite()) else {
        return error("internal", format!("no score in {report}"));
    };
    let score = score.clamp(0.0, 1.0);
    let mut details = format!(
        "comparison method: {}\nsimilarity: {score:.3}\nthreshold: {:.3}",
        p.comparison_method, p.similarity_threshold
    );
    if p.comparison_method == "complexity" {
        details.push_str(&format!(
            "\nagent: {}\nreference: {}\nparts: {}",
            report["agent"], report["reference"], report["parts"]
        ));
    }
    Outcome {
        score,
        details,
        error: None,
    }
}

/// The one workspace file `pattern` names (a path, or a glob matching exactly one).
fn agent_target(workspace: &Path, pattern: &str) -> Result<PathBuf, String> {
    let input =
        grader_kit::GradingInput::new(Value::Object(Map::new()), workspace.display().to_string());
    match criteria_common::read_target(&input, pattern)? {
        criteria_common::Target::One(rel, _) => Ok(workspace.join(rel)),
        criteria_common::Target::Missing(why) => Err(format!("agent file: {why}")),
    }
}

/// Which parameter strings of `reference_comparison` are workspace paths, for the check
/// made as the task file is read.
pub(crate) fn param_kind(
    path: &[criteria_common::PathSeg<'_>],
) -> Option<criteria_common::ParamKind> {
    match path {
        [criteria_common::PathSeg::Key("agent_file")] => {
            Some(criteria_common::ParamKind::WorkspacePath)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn validation() {
        assert_eq!(
            Params::parse(&params(
                json!({"agent_file": "a.py", "reference_file": "a.py", "similarity_threshold": 0.6})
            ))
            .map(|p| p.pass_threshold()),
            Ok(0.6)
        );
        for bad in [
            json!({"agent_file": "a.py", "reference_file": 3}),
            json!({"agent_file": "a.py", "reference_file": "../x.py"}),
            json!({"agent_file": "../a.py", "reference_file": "x.py"}),
            json!({"agent_file": "a.py", "reference_file": "x.py", "comparison_method": "diff"}),
            json!({"agent_file": "a.py", "reference_file": "x.py", "similarity_threshold": 2}),
        ] {
            assert!(Params::parse(&params(bad.clone())).is_err(), "{bad}");
        }
    }

    fn has_python() -> bool {
        std::process::Command::new("python3")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[tokio::test]
    async fn methods_score_like_coder_eval() {
        if !has_python() {
            eprintln!("skipped: no python3");
            return;
        }
        let ws = criteria_common::scratch_workspace("refcmp-ws");
        let reference = criteria_common::scratch_workspace("refcmp-ref");
        let solution = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n";
        std::fs::write(reference.join("solution.py"), solution).unwrap();
        // Renamed identifiers: the same AST node types and the same token types.
        std::fs::write(
            ws.join("same.py"),
            "def plus(x, y):\n    return x + y\n\nprint(plus(3, 4))\n",
        )
        .unwrap();
        std::fs::write(
            ws.join("other.py"),
            "import sys\nfor line in sys.stdin:\n    if line.strip():\n        print(line.upper())\n",
        )
        .unwrap();
        std::fs::write(ws.join("broken.py"), "def f(:\n").unwrap();
        let env = CommandEnv::default();
        let run = |agent: &str, method: &str| {
            let p = Params::parse(&params(
                json!({"agent_file": agent, "reference_file": "solution.py", "comparison_method": method}),
            ))
            .unwrap();
            let (ws, reference, env) = (ws.clone(), reference.clone(), env.clone());
            async move { grade(&p, &ws, Some(&reference), &env).await }
        };
        for method in ["ast", "token", "complexity"] {
            let o = run("same.py", method).await;
            assert!(o.error.is_none(), "{method}: {}", o.details);
            if method == "complexity" {
                // Same complexity and function count, same loc: 0.5·(1−1/1.5) + 0.3·(1−4/6) + 0.2
                let want = 0.5 * (1.0 - 1.0 / 1.5) + 0.3 * (1.0 - 4.0 / 6.0) + 0.2;
                assert!((o.score - want).abs() < 1e-9, "{}: {}", o.score, o.details);
            } else {
                assert_eq!(o.score, 1.0, "{method}: {}", o.details);
            }
            let o = run("other.py", method).await;
            assert!(o.score < 0.8, "{method} scored {} for other code", o.score);
        }
        let o = run("broken.py", "ast").await;
        assert_eq!(o.error.unwrap().0, "syntax_error");
        let o = run("missing.py", "ast").await;
        assert_eq!(o.error.unwrap().0, "missing_file");
        let p = Params::parse(&params(
            json!({"agent_file": "same.py", "reference_file": "solution.py"}),
        ))
        .unwrap();
        let o = grade(&p, &ws, None, &env).await;
        assert_eq!(o.error.unwrap().0, "no_reference");
        // coder_eval's older form: no reference_file, a reference of one file.
        let p = Params::parse(&params(json!({"agent_file": "same.py"}))).unwrap();
        let o = grade(&p, &ws, Some(&reference), &env).await;
        assert_eq!(o.score, 1.0, "{}", o.details);
        let o = grade(&p, &ws, Some(&reference.join("solution.py")), &env).await;
        assert_eq!(o.score, 1.0, "{}", o.details);
        std::fs::write(reference.join("other.py"), "x = 1\n").unwrap();
        let o = grade(&p, &ws, Some(&reference), &env).await;
        assert!(o.error.unwrap().1.contains("holds 2 files"));
    }
}
