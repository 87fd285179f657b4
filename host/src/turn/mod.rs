//! One turn, live or replayed: spawn, frame stdout into lines (`framer`) and record
//! (`live`, [`recording`]) → reduce (`pipeline`, through the harness's reducer component)
//! → collect (`collect`: counts, caps, stop decisions) → finish (`finish.rs`: the turn
//! record, with the timing maths of `timing.rs`). [`replay`] runs a recording back
//! through the same pipeline, so a recording replays through exactly the code that
//! reduced it live. [`early_stop`] ends a turn once its armed criteria settle (the task
//! file's `stop_early:` block is `early_stop/block.rs`; the plan a recording keeps and its
//! watchers armed from it, for a run or a replay, `early_stop/arm.rs`).

pub(crate) mod collect;
pub mod early_stop;
pub(crate) mod finish;
mod framer;
pub(crate) mod live;
pub(crate) mod pipeline;
pub mod recording;
pub mod replay;
mod timing;

#[cfg(test)]
mod tests {
    /// This module's doc names every submodule, and the README's `turn/` row names every
    /// file of `early_stop/` (the task-file syntax of `stop_early:` is one of them).
    #[test]
    fn the_docs_name_every_part_of_a_turn() {
        let source = include_str!("mod.rs");
        let doc: String = source
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let code = source.split("#[cfg(test)]").next().unwrap();
        for line in code.lines() {
            let Some(name) = line.trim_end_matches(';').rsplit("mod ").next() else {
                continue;
            };
            if !line.contains("mod ") || line.starts_with("//") {
                continue;
            }
            assert!(
                doc.contains(&format!("`{name}")),
                "`{name}` is not in the doc"
            );
        }
        let readme = include_str!("../../../README.md");
        let row = readme
            .lines()
            .find(|l| l.starts_with("| `host/src/turn/` |"))
            .expect("the README's turn/ row");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/turn/early_stop");
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name != "tests.rs" {
                assert!(
                    row.contains(&format!("`early_stop/{name}`")),
                    "{name}: {row}"
                );
            }
        }
    }
}
