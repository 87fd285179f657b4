//! The task-file loader against arbitrary YAML and mutated real task files (`tasks/`,
//! `tests/fixtures`): whatever the text, loading returns a task or an error naming the
//! file, never a panic (proptest turns a panic into a failed case) and never a hang.
//! Mutations are YAML-aware (a value anywhere replaced by another type, an extreme
//! number, a hostile string; a key dropped; a known field added in a wrong place) as well
//! as byte-level. Bounded for CI; `PROPTEST_CASES` raises the count (README). Failures
//! proptest finds are kept in `tests/proptest-regressions/fuzz_tasks.txt` (committed) and
//! replayed first.

use crate::support::root;
use coder_eval::task::Task;
use proptest::prelude::*;
use serde_yaml_ng::{Mapping, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Every YAML file under `tasks/` and `tests/fixtures/` with its text.
fn real_files() -> &'static [(PathBuf, String)] {
    static FILES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut files = Vec::new();
        let mut dirs = vec![root().join("tasks"), root().join("tests/fixtures")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    files.push((path, text));
                }
            }
        }
        files.sort();
        assert!(files.len() > 20, "too few task files");
        files
    })
}

/// Field names task files use, so generated YAML reaches past the first unknown key.
const FIELDS: &[&str] = &[
    "task_id",
    "description",
    "initial_prompt",
    "agent",
    "type",
    "model",
    "scripted_model",
    "run_limits",
    "max_turns",
    "max_tool_calls",
    "turn_timeout",
    "task_timeout",
    "success_criteria",
    "path",
    "command",
    "command_pattern",
    "weight",
    "dataset",
    "rows",
    "template_dir",
    "starter_files",
    "pre_run",
    "post_run",
    "sandbox",
    "driver",
    "replicates",
    "allowed_tools",
    "plugins",
    "thinking_level",
    "system_prompt_mode",
    "budgets",
    "max_usd",
    "early_stop",
    "pass_threshold",
    "variants",
    "tags",
    "params",
    "component",
    "content",
];

fn odd_value(pick: u32, rng: u64) -> Value {
    let s = |t: &str| Value::String(t.to_string());
    match pick % 16 {
        0 => Value::Null,
        1 => Value::from(-1),
        2 => Value::from(u64::MAX),
        3 => Value::from(i64::MIN),
        4 => Value::from(f64::NAN),
        5 => Value::from(1e308),
        6 => s(""),
        7 => s(&"y".repeat((rng % 100_000) as usize)),
        8 => Value::Sequence(vec![Value::Null; (rng % 5) as usize]),
        9 => Value::Mapping(Mapping::new()),
        10 => Value::Bool(rng.is_multiple_of(2)),
        11 => s([
            "../../../etc/passwd",
            "/",
            "-5s",
            "99999999999h",
            "1e400",
            "\0",
        ][(rng % 6) as usize]),
        12 => s(FIELDS[(rng as usize) % FIELDS.len()]),
        13 => s("{{workspace}}/{{nope}}"),
        14 => s(["1s", "0", "0s", "1.5m", "P1D", "25h"][(rng % 6) as usize]),
        _ => {
            let mut m = Mapping::new();
            m.insert(s(FIELDS[(rng as usize) % FIELDS.len()]), Value::Null);
            Value::Mapping(m)
        }
    }
}

/// Applies `op` at a path of `v` chosen by `path`: 0 replace, 1 drop a key, 2 add a key.
fn mutate(v: &mut Value, path: &[u32], op: u8, odd: Value, key: &str) {
    let Some((&step, rest)) = path.split_first() else {
        match (op, &mut *v) {
            (2, Value::Mapping(m)) => {
                m.insert(Value::String(key.to_string()), odd);
            }
            _ => *v = odd,
        }
        return;
    };
    match v {
        Value::Mapping(m) if !m.is_empty() => {
            let k = m.keys().nth(step as usize % m.len()).unwrap().clone();
            if op == 1 && rest.is_empty() {
                m.remove(&k);
            } else {
                mutate(m.get_mut(&k).unwrap(), rest, op, odd, key);
            }
        }
        Value::Sequence(items) if !items.is_empty() => {
            let i = step as usize % items.len();
            if op == 1 && rest.is_empty() {
                items.remove(i);
            } else {
                mutate(&mut items[i], rest, op, odd, key);
            }
        }
        _ => *v = odd,
    }
}

/// A task text to load, and the path it claims (relative paths resolve against it).
#[derive(Debug, Clone)]
enum Input {
    Yaml {
        file: usize,
        path: Vec<u32>,
        op: u8,
        pick: u32,
        rng: u64,
        key: usize,
    },
    Cut {
        file: usize,
        at: usize,
    },
    Splice {
        file: usize,
        at: usize,
        bytes: String,
    },
    Generated(Value),
}

fn render(input: &Input) -> (PathBuf, String) {
    let files = real_files();
    let file = |i: usize| &files[i % files.len()];
    match input {
        Input::Yaml {
            file: f,
            path,
            op,
            pick,
            rng,
            key,
        } => {
            let (p, text) = file(*f);
            let text = match serde_yaml_ng::from_str::<Value>(text) {
                Ok(mut v) => {
                    mutate(
                        &mut v,
                        path,
                        op % 3,
                        odd_value(*pick, *rng),
                        FIELDS[key % FIELDS.len()],
                    );
                    serde_yaml_ng::to_string(&v).unwrap()
                }
                Err(_) => text.clone(),
            };
            (p.clone(), text)
        }
        Input::Cut { file: f, at } => {
            let (p, text) = file(*f);
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            (p.clone(), text[..at].to_string())
        }
        Input::Splice { file: f, at, bytes } => {
            let (p, text) = file(*f);
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            (p.clone(), format!("{}{bytes}{}", &text[..at], &text[at..]))
        }
        Input::Generated(v) => (
            root().join("tasks/fuzz/generated.yaml"),
            serde_yaml_ng::to_string(v).unwrap(),
        ),
    }
}

fn generated() -> impl Strategy<Value = Value> {
    let leaf = (any::<u32>(), any::<u64>()).prop_map(|(p, r)| odd_value(p, r));
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
            prop::collection::vec((0..FIELDS.len(), inner), 0..6).prop_map(|kv| {
                Value::Mapping(
                    kv.into_iter()
                        .map(|(k, v)| (Value::String(FIELDS[k].to_string()), v))
                        .collect(),
                )
            }),
        ]
    })
}

fn input() -> impl Strategy<Value = Input> {
    let path = || prop::collection::vec(any::<u32>(), 0..6);
    prop_oneof![
        6 => (any::<usize>(), path(), any::<u8>(), any::<u32>(), any::<u64>(), any::<usize>())
            .prop_map(|(file, path, op, pick, rng, key)| Input::Yaml { file, path, op, pick, rng, key }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(file, at)| Input::Cut { file, at }),
        1 => (any::<usize>(), any::<usize>(), "[\\PC\n\t:\\-\\[\\]{}&*!|>'\"%@`#]{1,12}")
            .prop_map(|(file, at, bytes)| Input::Splice { file, at, bytes }),
        2 => generated().prop_map(Input::Generated),
    ]
}

fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::SourceParallel("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases())]

    /// A task or an error naming the file; never a panic.
    #[test]
    fn any_task_text_loads_or_is_an_error(input in input()) {
        let (path, text) = render(&input);
        match Task::parse_file(&text, &path) {
            Ok(loaded) => prop_assert!(!loaded.tasks.is_empty() || text.trim().is_empty()),
            Err(err) => {
                let message = err.to_string();
                prop_assert!(
                    message.contains(&*path.to_string_lossy()) || message.contains(path.file_name().unwrap().to_str().unwrap()),
                    "the error names the file: {message}"
                );
            }
        }
    }

    /// Arbitrary text (not even YAML) is an error, never a panic.
    #[test]
    fn arbitrary_text_is_an_error_never_a_panic(text in "\\PC{0,200}") {
        let path = root().join("tasks/fuzz/arbitrary.yaml");
        let _ = Task::parse_file(&text, &path);
    }
}

#[test]
fn a_billion_laughs_is_an_error_not_a_hang() {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut prev = 'a';
    for name in 'b'..='j' {
        text.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        prev = name;
    }
    text.push_str("task_id: laughs\ninitial_prompt: *j\n");
    let err = Task::parse_file(&text, &root().join("tasks/fuzz/laughs.yaml")).err();
    assert!(err.is_some(), "a billion laughs must not load");
}

#[test]
fn deeply_nested_yaml_is_refused_before_the_parser_stalls_on_it() {
    // 100 000 levels: the YAML parser's work grows with the square of the depth (half a
    // minute in a release build) before its own depth limit rejects it; the loader refuses
    // it by counting first.
    let depth = 100_000;
    for text in [
        format!(
            "task_id: deep\ninitial_prompt: {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        format!("task_id: deep\ninitial_prompt: {}x\n", "{a: ".repeat(depth)),
    ] {
        let err = Task::parse_file(&text, &root().join("tasks/fuzz/deep.yaml")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("deep.yaml"), "{message}");
        assert!(
            message.contains("more than the 10000 a task file may hold"),
            "{message}"
        );
    }
}
