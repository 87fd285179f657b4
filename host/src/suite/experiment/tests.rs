//! The unit tests of experiment files, overrides and the merge.

use super::*;
use crate::task::dataset::Selection;

#[test]
fn bad_experiment_files_are_refused_with_their_reason() {
    let p = Path::new("/x/exp.yaml");
    let e = Experiment::parse("experiment_id: Bad_Id\nvariants: [{variant_id: a}]", p);
    assert!(e.unwrap_err().to_string().contains("kebab-case"));
    let e = Experiment::parse(
        "experiment_id: a\nvariants: [{variant_id: a}, {variant_id: a}]",
        p,
    );
    assert!(e.unwrap_err().to_string().contains("twice"));
    let e = Experiment::parse("experiment_id: a\nvariants: [{variant_id: a, modle: x}]", p);
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:2:") && msg.contains("modle"),
        "{msg}"
    );
    let e = Experiment::parse(
        "experiment_id: a\nvariants: [{variant_id: a, initial_prompt: x, prompt_mutations: []}]",
        p,
    );
    assert!(e.unwrap_err().to_string().contains("give one of"));
    let e = Experiment::parse(
        "experiment_id: a\nvariants:\n  - variant_id: fast\n    run_limits: {max_turnz: 3}",
        p,
    );
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:4:18: variants[fast].run_limits:")
            && msg.contains("max_turnz"),
        "{msg}"
    );
    let e = Overrides {
        set: vec!["run_limit.max_turns=3".into()],
        ..Default::default()
    }
    .layer();
    assert!(
        e.unwrap_err()
            .to_string()
            .contains("did you mean `run_limits`")
    );
    // A misspelt field inside a section is the -D argument's error.
    let e = Overrides {
        set: vec!["run_limits.max_turn=3".into()],
        ..Default::default()
    }
    .layer();
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.starts_with("-D run_limits.max_turn=3: run_limits:") && msg.contains("max_turn"),
        "{msg}"
    );
}

#[test]
fn a_legacy_max_turns_beats_defaults_and_yields_to_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "task_id: t\ninitial_prompt: hi\nagent: {type: claude-code, max_turns: 4}\nsuccess_criteria: []\n",
    )
    .unwrap();
    let max_turns = |e: Option<&Experiment>, set: &[&str]| {
        let o = Overrides {
            set: set.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let (r, _) =
            resolve_file(&task, &Selection::default(), e, &o).unwrap_or_else(|e| panic!("{e}"));
        r[0].task.run_limits.max_turns
    };
    let e = Experiment::parse(
        "experiment_id: x\ndefaults:\n  run_limits: {max_turns: 9}\nvariants: [{variant_id: a}]",
        &dir.path().join("exp.yaml"),
    )
    .unwrap();
    // Task beats defaults; -D beats task; the variant's legacy key maps too.
    assert_eq!(max_turns(Some(&e), &[]), Some(4));
    assert_eq!(max_turns(Some(&e), &["run_limits.max_turns=2"]), Some(2));
    assert_eq!(max_turns(None, &["run_limits.max_turns=2"]), Some(2));
    assert_eq!(max_turns(None, &["agent.max_turns=3"]), Some(3));
}

#[test]
fn repeats_past_the_bound_are_refused_in_every_layer() {
    let p = Path::new("/x/exp.yaml");
    let e = Experiment::parse(
        "experiment_id: a\ndefaults: {repeats: 10001}\nvariants: [{variant_id: a}]",
        p,
    );
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.contains("defaults.repeats: 10001 is more than 10000"),
        "{msg}"
    );
    let e = Experiment::parse(
        "experiment_id: a\nvariants: [{variant_id: a, repeats: 50000}]",
        p,
    );
    assert!(e.unwrap_err().to_string().contains("more than 10000"));
    assert!(
        Experiment::parse(
            "experiment_id: a\nvariants: [{variant_id: a, repeats: 10000}]",
            p
        )
        .is_ok()
    );
    // A task file's own, and `-D repeats=`.
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    let body = "task_id: t\ninitial_prompt: hi\nagent: {type: claude-code}\nsuccess_criteria:\n  - {type: file_exists, path: x}\n";
    std::fs::write(&task, format!("{body}repeats: 20000\n")).unwrap();
    let err = resolve_file(&task, &Selection::default(), None, &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("from 1 to 10000"), "{err}");
    std::fs::write(&task, body).unwrap();
    let over = Overrides {
        set: vec!["repeats=10001".into()],
        ..Default::default()
    };
    let err = resolve_file(&task, &Selection::default(), None, &over)
        .unwrap_err()
        .to_string();
    assert!(err.contains("from 1 to 10000"), "{err}");
}

#[test]
fn a_nested_unknown_field_is_placed_on_its_own_line() {
    let p = Path::new("/x/exp.yaml");
    let text = "experiment_id: a\ndefaults:\n  run_limits:\n    max_turns: 3\n    max_turnz: 4\nvariants:\n  - variant_id: x\n";
    let msg = Experiment::parse(text, p).unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:5:5: defaults.run_limits:"),
        "{msg}"
    );
    // In the second variant, not the first one's same-named key.
    let text = "experiment_id: a\nvariants:\n  - variant_id: x\n    agent:\n      model: m\n  - variant_id: y\n    agent:\n      model: m\n      modle: n\n";
    let msg = Experiment::parse(text, p).unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:9:7: variants[y].agent:"),
        "{msg}"
    );
    // A key left of the layer ends it: a later same-named key is not taken for it.
    let text = "experiment_id: a\ndefaults:\n  agent: {modle: x}\nvariants:\n  - variant_id: x\n";
    let msg = Experiment::parse(text, p).unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:3:11: defaults.agent:"),
        "{msg}"
    );
}

/// Issue 15 trial: coder_eval's `rephrase` mutation is refused as such, not as an unknown
/// variant, with its line.
#[test]
fn a_rephrase_mutation_is_refused_as_not_supported() {
    let e = Experiment::parse(
        "experiment_id: a\nvariants:\n  - variant_id: r\n    prompt_mutations:\n      - {type: rephrase, instruction: shorter}\n",
        Path::new("/x/exp.yaml"),
    );
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.starts_with("/x/exp.yaml:5:")
            && msg.contains("`rephrase` mutation (an LLM rewrite of the prompt) is not supported"),
        "{msg}"
    );
}

/// Issue 15 trial: these named the file and field but no line.
#[test]
fn a_duplicate_id_a_zero_repeats_a_bad_regex_and_a_missing_script_name_their_line() {
    let p = Path::new("/x/exp.yaml");
    let parse = |text: &str| Experiment::parse(text, p).unwrap_err().to_string();
    let msg = parse(
        "experiment_id: a\nvariants:\n  - variant_id: x\n  - variant_id: y\n  - variant_id: x\n",
    );
    assert!(
        msg.starts_with("/x/exp.yaml:5:5: variants[x].variant_id: given twice"),
        "{msg}"
    );
    let msg = parse(
        "experiment_id: a\ndefaults:\n  agent: {model: m}\n  repeats: 0\nvariants:\n  - variant_id: x\n",
    );
    assert!(
        msg.starts_with("/x/exp.yaml:4:3: defaults.repeats: must be at least 1"),
        "{msg}"
    );
    let msg = parse(
        "experiment_id: a\nvariants:\n  - variant_id: x\n    repeats: 2\n  - variant_id: y\n    repeats: 0\n",
    );
    assert!(
        msg.starts_with("/x/exp.yaml:6:5: variants[y].repeats: must be at least 1"),
        "{msg}"
    );
    let msg = parse("experiment_id: a\nvariants: [{variant_id: x, repeats: 10001}]\n");
    assert!(
        msg.starts_with("/x/exp.yaml:2:28: variants[x].repeats: 10001 is more than 10000"),
        "{msg}"
    );
    let refused = |text: &str| {
        Experiment::parse(text, p)
            .unwrap()
            .refusals()
            .unwrap_err()
            .to_string()
    };
    // The second mutation's, not the first one's.
    let msg = refused(
        "experiment_id: a\nvariants:\n  - variant_id: x\n    agent: {type: claude-code}\n    prompt_mutations:\n      - {type: replace, pattern: a, replacement: b, regex: true}\n      - type: replace\n        pattern: \"(\"\n        replacement: b\n        regex: true\n",
    );
    assert!(
        msg.starts_with("/x/exp.yaml:7:9: variants[x].prompt_mutations[1]: replace: bad regex"),
        "{msg}"
    );
    let msg = refused(
        "experiment_id: a\nvariants:\n  - variant_id: x\n  - variant_id: y\n    agent:\n      model: m\n      scripted_model: nope/s.yaml\n",
    );
    assert!(
        msg.starts_with(
            "/x/exp.yaml:7:7: variants[y].agent.scripted_model: /x/nope/s.yaml is not a file"
        ),
        "{msg}"
    );
}

#[test]
fn a_long_an_unusual_or_a_case_colliding_variant_id_is_refused_naming_the_rule() {
    let p = Path::new("/x/exp.yaml");
    let parse = |variants: &str| {
        Experiment::parse(&format!("experiment_id: a\nvariants:\n{variants}"), p)
            .err()
            .map(|e| e.to_string())
    };
    let long = "v".repeat(MAX_VARIANT_ID + 1);
    let msg = parse(&format!("  - variant_id: {long}\n")).expect("a 65-character id refused");
    assert!(
        msg.contains(&format!("1 to {MAX_VARIANT_ID} characters")),
        "{msg}"
    );
    assert!(
        !msg.contains(&long),
        "the id is shortened in the message: {msg}"
    );
    assert_eq!(
        parse(&format!("  - variant_id: {}\n", "v".repeat(MAX_VARIANT_ID))),
        None
    );
    for bad in ["dïl-🚀", ".hidden", "a/b", "a b"] {
        let msg = parse(&format!("  - variant_id: \"{bad}\"\n")).expect(bad);
        assert!(
            msg.contains("each an ASCII letter, digit, `-`, `_` or `.`, not starting with `.`"),
            "{bad}: {msg}"
        );
    }
    let msg = parse("  - variant_id: fast\n  - variant_id: slow\n  - variant_id: Fast\n")
        .expect("Fast and fast refused");
    assert!(
        msg.starts_with(
            "/x/exp.yaml:5:5: variants[Fast].variant_id: the same folder as variants[fast]"
        ),
        "{msg}"
    );
}
