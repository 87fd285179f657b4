//! The unit tests of task-file loading.

use super::*;
use std::path::Path;
use std::time::Duration;

fn parse(text: &str) -> Result<Task, TaskError> {
    Task::parse(text, Path::new("/tmp/t/task.yaml"))
}

#[test]
fn minimal_task() {
    let t =
        parse("task_id: t\ninitial_prompt: hi\nrun_limits: {max_turns: 3, turn_timeout: 90s}\n")
            .unwrap();
    assert_eq!(t.run_limits.max_turns, Some(3));
    assert_eq!(t.run_limits.turn_timeout, Some(Duration::from_secs(90)));
}

#[test]
fn unknown_key_names_file_line_and_closest_key() {
    let err = parse("task_id: t\ninitial_prompt: hi\nrun_limits:\n  max_turn: 3\n").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("/tmp/t/task.yaml:4:"), "{text}");
    assert!(text.contains("unknown field `max_turn`"), "{text}");
    assert!(text.contains("did you mean `max_turns`?"), "{text}");
}

#[test]
fn rules_beyond_the_schema() {
    assert!(
        parse("task_id: t\n")
            .unwrap_err()
            .to_string()
            .contains("initial_prompt is required")
    );
    assert!(parse("task_id: a/b\ninitial_prompt: x\n").is_err());
    let bad =
        parse("task_id: t\ninitial_prompt: x\nrun_limits: {turn_timeout: soon}\n").unwrap_err();
    assert!(bad.to_string().contains("not a duration"), "{bad}");
}

#[test]
fn a_task_id_names_a_folder() {
    for bad in [
        r#""nul\0id""#,
        r#""new\nline""#,
        r#""ctl\u0001id""#,
        "a/b",
        ".hidden",
        "' '",
    ] {
        let err = parse(&format!("task_id: {bad}\ninitial_prompt: hi\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("must be a non-empty name without slashes or control characters"),
            "{bad}: {err}"
        );
    }
    assert!(parse("task_id: café-1\ninitial_prompt: hi\n").is_ok());
}

#[test]
fn a_symlinked_task_file_resolves_its_paths_from_the_links_folder() {
    let root = tempfile::tempdir().unwrap();
    let (real, link) = (root.path().join("real"), root.path().join("link"));
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(&link).unwrap();
    std::fs::write(
        real.join("task.yaml"),
        "task_id: t\ninitial_prompt_file: prompt.md\n",
    )
    .unwrap();
    std::fs::write(real.join("prompt.md"), "from the target's folder\n").unwrap();
    std::fs::write(link.join("prompt.md"), "from the link's folder\n").unwrap();
    std::os::unix::fs::symlink("../real/task.yaml", link.join("task.yaml")).unwrap();
    let task = Task::load(&link.join("task.yaml")).unwrap();
    assert_eq!(task.dir, std::path::absolute(&link).unwrap());
    assert_eq!(task.prompt.trim(), "from the link's folder");
}

#[test]
fn a_folder_given_as_a_task_file_is_refused_by_name_pointing_at_its_task_file() {
    let dir = std::env::temp_dir().join(format!("ce-folder-task-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::create_dir_all(dir.join("task_dir")).unwrap();
    std::fs::write(dir.join("task_dir/task.yaml"), "task_id: t\n").unwrap();
    let err = Task::load(&dir.join("task_dir")).unwrap_err().to_string();
    assert!(err.contains("is a folder, not a task file"), "{err}");
    assert!(err.contains("task_dir/task.yaml"), "{err}");
    let err = Task::load(&dir.join("empty")).unwrap_err().to_string();
    assert!(
        err.ends_with("empty: is a folder, not a task file"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
