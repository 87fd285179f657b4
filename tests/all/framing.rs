//! What a CLI writes, end to end through a live run: a huge `--version` line.

use crate::support::{corpus, scratch};
use coder_eval::run::{RunOptions, prepare, run_one};
use coder_eval::task::Task;

#[test]
fn a_huge_version_line_is_cut_and_the_task_runs() {
    // A `--version` that prints a 1 MB line: it was handed whole to the harness's `totals`
    // call, which ran out of fuel and made the task an ERROR.
    let dir = scratch("huge-version");
    let cli = dir.join("fake-claude.sh");
    std::fs::write(
        &cli,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && head -c 1000000 /dev/zero | tr '\\0' 7 && exit 0\n\
             cat {}\n",
            corpus("live/claude/hello.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("t.yaml"),
        "task_id: huge_version\ninitial_prompt: hi\n",
    )
    .unwrap();
    let task = Task::load(&dir.join("t.yaml")).unwrap();
    let mut options = RunOptions::new(dir.join("out"));
    options.cli_override = Some(cli);
    let prepared = prepare(vec![task], &["claude-code".to_string()], &options)
        .unwrap()
        .pop()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let result = runtime.block_on(run_one(prepared, &options, rx));
    assert!(result.error.is_none(), "{:?}", result.error);
    let turn = result.turn.as_ref().expect("the turn ran");
    assert!(turn.reducer_error.is_none(), "{:?}", turn.reducer_error);
    let json = serde_json::to_string(&result).unwrap();
    assert!(
        json.contains(&"7".repeat(200)) && !json.contains(&"7".repeat(201)),
        "the version is cut at 200 characters"
    );
}
