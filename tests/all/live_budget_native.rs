//! A budget the CLI enforces itself: the launch plan (harness@0.2.0 `run-limits.budgets`)
//! hands Claude Code the task's `max_usd` as `--max-budget-usd`, so it stops between model
//! calls although its stream reports cost only in the final result
//! (tasks/cost/usd_budget). Replay of the recording reaches the same record.

use crate::live_claude::{assert_replay_matches, result_dir, run_task};
use crate::support::scratch;
use coder_eval::results::{BudgetKind, StopReason, TaskStatus};

#[test]
fn claude_code_stops_itself_at_max_usd() {
    let out = scratch("live-budget-native");
    let r = run_task("tasks/cost/usd_budget/task.yaml", "claude-code", &out, &[]);
    let t = r.turn.as_ref().unwrap_or_else(|| panic!("{:?}", r.error));
    let argv = r.cli.argv.join(" ");
    assert!(argv.contains("--max-budget-usd 0.15"), "{argv}");
    assert!(
        r.run_limits.native.iter().any(|l| l == "max_usd"),
        "{:?}",
        r.run_limits.native
    );
    // The CLI ended itself on the budget, before the later steps. Where exactly depends on
    // its own pricing of each call, whose prompt size follows the paths in it (about $0.05
    // a call): the crossing falls after the third call or the fourth, never after the fifth.
    let result = t.cli_result.as_ref().expect("a final result");
    assert_eq!(
        result.error_kind.as_deref(),
        Some("error_max_budget_usd"),
        "{result:?}"
    );
    let cost = result.cost_usd.expect("Claude Code reports its cost");
    assert!(cost >= 0.15, "{cost}");
    let steps = std::fs::read_to_string(
        result_dir(&out, "usd_budget", "claude-code").join("workspace/steps.txt"),
    )
    .unwrap_or_default();
    assert!(steps.contains("step 2"), "{steps}");
    assert!(!steps.contains("step 5"), "{steps}");
    // The host read the same budget breach from the result (the CLI stopped itself, or the
    // host's own check stopped what was left of it).
    let breach = t.budget.as_ref().expect("a budget breach");
    assert_eq!(breach.budget, BudgetKind::MaxUsd);
    assert!(breach.actual > 0.15 && breach.limit == 0.15, "{breach:?}");
    assert!(
        matches!(
            r.stop.as_ref().map(|s| s.reason),
            None | Some(StopReason::MaxUsd)
        ),
        "{:?}",
        r.stop
    );
    assert_eq!(r.status, TaskStatus::CostBudgetExceeded, "{:?}", r.error);
    assert_replay_matches(&out, &r);
}
