//! A suite's live progress: tasks done / running / failed of the total, the ETA and the
//! running cost. On a terminal (stdout is one) a bar drawn by indicatif, the task rows
//! printed above it; otherwise one plain line on stderr as each task ends, so a log or CI
//! keeps a readable trace and stdout keeps only the task rows:
//!
//! ```text
//! progress: 3/10 done, 2 running, 1 failed; elapsed 0:41, ETA 1:35; cost $0.0421 (1 unknown)
//! ```
//!
//! After an interrupt, a task the signal stopped is counted `interrupted` (done, not
//! failed) and one that never started `not run` (neither done nor failed); the ETA gives
//! way to `stopping` ([`Progress::stop`]), the tasks that never started print no line of
//! their own, and one line at the end ([`Progress::finish`]) counts them:
//! `progress: 13/18 done, 0 running, 9 failed, 4 interrupted, 5 not run; elapsed 2:03,
//! stopping; …`. A task's line comes after its row ([`Progress::finished`] is called
//! once the row is printed), so `4/4 done` follows the last row.
//!
//! The cost is the sum of the tasks' `cost.total_cost_usd` (earlier attempts of a retried
//! task included); a task whose CLI ran but reported no cost is counted as unknown, never
//! as $0. A run of a single task shows nothing.

use crate::results::{TaskResult, TaskStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The display: [`Progress::begin`] once the suite's size is known, then
/// [`Progress::started`] and [`Progress::finished`] as tasks start and end.
#[derive(Debug)]
pub struct Progress {
    terminal: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    done: usize,
    running: usize,
    /// The most tasks counted running at once.
    peak_running: usize,
    failed: usize,
    /// Ended by the host's interrupt after they started (not counted failed).
    interrupted: usize,
    /// Never started: the interrupt came first (neither done nor failed).
    not_run: usize,
    /// Tasks finished by this run (not kept from an earlier one, not skipped): the ETA's
    /// basis.
    finished_here: usize,
    cost_usd: f64,
    /// Tasks whose CLI ran (or ran before a retry) without a known cost.
    cost_unknown: usize,
    /// Tasks with a known cost.
    cost_known: usize,
    start: Option<Instant>,
    /// The host's interrupt came: no ETA, no line per task that never starts.
    stopping: bool,
    /// Counts changed since the last plain line (tasks that never started): the line
    /// [`Progress::finish`] prints.
    unprinted: bool,
}

/// What the display says at one moment (for the plain line, and tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub total: usize,
    pub done: usize,
    pub running: usize,
    /// The most tasks counted running at once so far (never above `--jobs`).
    pub peak_running: usize,
    pub failed: usize,
    /// Stopped by the host's interrupt once started (among `done`, not among `failed`).
    pub interrupted: usize,
    /// Never started, the interrupt came first (not among `done`).
    pub not_run: usize,
    pub elapsed: Duration,
    /// `None` until a task of this run has finished.
    pub eta: Option<Duration>,
    /// USD of the tasks with a known cost; `None` when no task's cost is known.
    pub cost_usd: Option<f64>,
    pub cost_unknown: usize,
    /// The host's interrupt came ([`Progress::stop`]): `eta` is `None`, the line says
    /// `stopping`.
    pub stopping: bool,
}

impl Progress {
    /// A display drawn as a bar when `terminal` (see [`Progress::for_stdout`]), else as
    /// plain lines on stderr.
    pub fn new(terminal: bool) -> Progress {
        Progress {
            terminal,
            state: Mutex::new(State::default()),
        }
    }

    /// A bar when stdout is a terminal, else plain lines.
    pub fn for_stdout() -> Progress {
        use std::io::IsTerminal;
        Progress::new(std::io::stdout().is_terminal())
    }

    /// The suite holds `total` units; the clock starts. Fewer than 2 shows nothing.
    pub(crate) fn begin(&self, total: usize) {
        let mut s = self.state.lock().unwrap();
        s.total = total;
        s.start = Some(Instant::now());
        if self.terminal && total > 1 {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::stdout(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "[{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(500));
            s.bar = Some(bar);
        }
        drop(s);
        self.redraw(false);
    }

    /// A task started (took its place among the `--jobs`).
    pub fn started(&self) {
        {
            let mut s = self.state.lock().unwrap();
            s.running += 1;
            s.peak_running = s.peak_running.max(s.running);
        }
        self.redraw(false);
    }

    /// A task that [`Progress::started`] has ended: it is not running any more (called
    /// before its place among the `--jobs` goes to the next task, so that the count never
    /// shows one running too many). It is counted done by [`Progress::finished`], once
    /// its row is printed.
    pub fn left(&self) {
        {
            let mut s = self.state.lock().unwrap();
            s.running = s.running.saturating_sub(1);
        }
        self.redraw(false);
    }

    /// The host's interrupt came: the ETA stops (the line says `stopping`), and the tasks
    /// that never start print no line each ([`Progress::not_run`]).
    pub fn stop(&self) {
        let changed = !std::mem::replace(&mut self.state.lock().unwrap().stopping, true);
        if changed {
            self.redraw(false);
        }
    }

    /// A task ended with `result` and its row is printed; `ran_here` is false for one
    /// kept from an earlier run or skipped (it never started in this run). One that ran
    /// here has [`Progress::left`] the running ones already.
    pub(crate) fn finished(&self, result: &TaskResult, ran_here: bool) {
        {
            let mut s = self.state.lock().unwrap();
            if ran_here {
                s.finished_here += 1;
            }
            s.done += 1;
            if stopped_by_interrupt(result) {
                s.interrupted += 1;
            } else if !matches!(result.status, TaskStatus::Success | TaskStatus::Skipped) {
                s.failed += 1;
            }
            let mut known = Vec::new();
            let mut unknown = 0;
            for retry in &result.infra_retries {
                match retry.cost_usd {
                    Some(c) => known.push(c),
                    None => unknown += 1,
                }
            }
            // No cost summary: no CLI was launched, nothing was spent.
            if let Some(c) = &result.cost {
                match c.total_cost_usd {
                    Some(usd) => known.push(usd),
                    None => unknown += 1,
                }
            }
            s.cost_usd += known.iter().sum::<f64>();
            s.cost_known += usize::from(!known.is_empty());
            s.cost_unknown += usize::from(unknown > 0);
        }
        self.redraw(ran_here);
    }

    /// A task of this run that never started (the host's interrupt came before its
    /// turn; `result` is what records it): counted `not run`, not done or failed. (A
    /// result the interrupt did not end is counted as [`Progress::finished`] counts one
    /// kept from an earlier run.)
    pub fn not_run(&self, result: &TaskResult) {
        if !stopped_by_interrupt(result) {
            return self.finished(result, false);
        }
        {
            let mut s = self.state.lock().unwrap();
            s.not_run += 1;
            s.stopping = true;
            s.unprinted = true;
        }
        self.redraw(false);
    }

    /// Prints a task's row: above the bar on a terminal, else on stdout.
    pub fn println(&self, line: &str) {
        let s = self.state.lock().unwrap();
        match &s.bar {
            Some(bar) => bar.println(line),
            None => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}").and_then(|()| out.flush());
            }
        }
    }

    /// The bar is removed (the suite ended or was interrupted); in plain mode, the line
    /// counting the tasks that never started (when any did not), once.
    pub fn finish(&self) {
        let bar = self.state.lock().unwrap().bar.take();
        match bar {
            Some(bar) => bar.finish_and_clear(),
            None => {
                if let Some(line) = self.final_line() {
                    eprintln!("{line}");
                }
            }
        }
    }

    /// The plain line [`Progress::finish`] prints: `None` when the last line printed
    /// already says it all (or the suite shows nothing).
    fn final_line(&self) -> Option<String> {
        let unprinted = std::mem::take(&mut self.state.lock().unwrap().unprinted);
        let snap = self.snapshot();
        (unprinted && snap.total > 1).then(|| snap.plain_line())
    }

    /// What the display says now.
    pub fn snapshot(&self) -> Snapshot {
        let s = self.state.lock().unwrap();
        let elapsed = s.start.map_or(Duration::ZERO, |t| t.elapsed());
        let remaining = s.total.saturating_sub(s.done + s.not_run);
        let eta = (s.finished_here > 0 && !s.stopping)
            .then(|| elapsed.mul_f64(remaining as f64 / s.finished_here as f64));
        Snapshot {
            total: s.total,
            done: s.done,
            running: s.running,
            peak_running: s.peak_running,
            failed: s.failed,
            interrupted: s.interrupted,
            not_run: s.not_run,
            elapsed,
            eta,
            cost_usd: (s.cost_known > 0).then_some(s.cost_usd),
            cost_unknown: s.cost_unknown,
            stopping: s.stopping,
        }
    }

    /// Updates the bar, or (plain mode, when a task of this run ended) prints a line.
    fn redraw(&self, task_ended: bool) {
        let snap = self.snapshot();
        if snap.total < 2 {
            return;
        }
        let mut s = self.state.lock().unwrap();
        match &s.bar {
            Some(bar) => {
                bar.set_position(snap.done as u64);
                bar.set_message(snap.message());
            }
            None if task_ended => {
                s.unprinted = false;
                eprintln!("{}", snap.plain_line());
            }
            None => {}
        }
    }
}

impl Snapshot {
    /// "2 running, 1 failed; ETA 1:35; cost $0.0421 (1 unknown)".
    pub fn message(&self) -> String {
        format!(
            "{} running, {} failed{}; {}; {}",
            self.running,
            self.failed,
            self.stopped(),
            self.eta_text(),
            self.cost()
        )
    }

    /// The plain line (module docs).
    pub(crate) fn plain_line(&self) -> String {
        format!(
            "progress: {}/{} done, {} running, {} failed{}; elapsed {}, {}; {}",
            self.done,
            self.total,
            self.running,
            self.failed,
            self.stopped(),
            clock(self.elapsed),
            self.eta_text(),
            self.cost()
        )
    }

    /// "ETA 1:35", "ETA -" (no task of this run ended yet), or "stopping" (interrupted).
    fn eta_text(&self) -> String {
        match (self.stopping, self.eta) {
            (true, _) => "stopping".to_string(),
            (false, Some(eta)) => format!("ETA {}", clock(eta)),
            (false, None) => "ETA -".to_string(),
        }
    }

    /// ", 2 interrupted, 5 not run" (each part only when not 0).
    fn stopped(&self) -> String {
        let mut out = String::new();
        if self.interrupted > 0 {
            out.push_str(&format!(", {} interrupted", self.interrupted));
        }
        if self.not_run > 0 {
            out.push_str(&format!(", {} not run", self.not_run));
        }
        out
    }

    fn cost(&self) -> String {
        let unknown = match self.cost_unknown {
            0 => String::new(),
            n => format!(" ({n} unknown)"),
        };
        match self.cost_usd {
            Some(usd) => format!("cost ${usd:.4}{unknown}"),
            None if self.cost_unknown > 0 => "cost unknown".to_string(),
            None => "cost -".to_string(),
        }
    }
}

/// Whether the host's interrupt ended `r` (as `suite::resume` tells it: a stop reason or
/// error kind `interrupted`).
/// Whether `r` was ended (or never started) by the host's interrupt.
pub(crate) fn stopped_by_interrupt(r: &TaskResult) -> bool {
    r.stop
        .as_ref()
        .is_some_and(|s| s.reason == crate::results::StopReason::Interrupted)
        || r.error_kind.as_deref() == Some("interrupted")
}

/// `m:ss`, or `h:mm:ss` from an hour on.
fn clock(d: Duration) -> String {
    let secs = d.as_secs();
    match secs / 3600 {
        0 => format!("{}:{:02}", secs / 60, secs % 60),
        h => format!("{h}:{:02}:{:02}", secs / 60 % 60, secs % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_line_says_unknown_cost_apart_from_known() {
        let snap = Snapshot {
            total: 10,
            done: 3,
            running: 2,
            peak_running: 2,
            failed: 1,
            interrupted: 0,
            not_run: 0,
            elapsed: Duration::from_secs(41),
            eta: Some(Duration::from_secs(95)),
            cost_usd: Some(0.0421),
            cost_unknown: 1,
            stopping: false,
        };
        assert_eq!(
            snap.plain_line(),
            "progress: 3/10 done, 2 running, 1 failed; elapsed 0:41, ETA 1:35; cost $0.0421 (1 unknown)"
        );
        let none = Snapshot {
            cost_usd: None,
            eta: None,
            cost_unknown: 2,
            ..snap.clone()
        };
        assert!(none.plain_line().ends_with("ETA -; cost unknown"));
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }

    fn result(status: TaskStatus, interrupted: bool) -> TaskResult {
        let mut r: TaskResult = serde_json::from_str(r#"{"result_version":1,"task_id":"t","harness":"codex","status":"SUCCESS","error":null,"description":null,"task_file":"/t.yaml","prompt":"p","requested_model":null,"cli":{"path":null,"version":null,"argv":[],"pgid":null,"caveats":[]},"run_limits":{"max_turns":null,"max_tool_calls":null,"turn_timeout_ms":null,"task_timeout_ms":null,"native":[]},"stop":null,"turn":null,"criteria":[],"weighted_score":null,"post_failure_criteria_results":[],"setup_ms":0,"grading_ms":0,"host_turn_work_us":0,"stderr_tail":"","scripted_model_requests":null,"paths":{"recording":"recording.jsonl","stderr":"stderr.log","workspace":"workspace"}}"#).unwrap();
        r.status = status;
        if interrupted {
            r.error_kind = Some("interrupted".into());
        }
        r
    }

    /// Issue 15 trial (N7): after Ctrl-C the ETA kept growing, and every task that never
    /// started printed a progress line of its own.
    #[test]
    fn after_an_interrupt_the_eta_stops_and_the_tasks_not_run_print_one_line() {
        let p = Progress::new(false);
        p.begin(5);
        p.started();
        p.left();
        p.finished(&result(TaskStatus::Success, false), true);
        assert!(p.snapshot().eta.is_some());
        assert_eq!(p.final_line(), None, "the last line said it all");
        p.stop();
        let snap = p.snapshot();
        assert_eq!(snap.eta, None);
        assert!(
            snap.plain_line().contains(", stopping; "),
            "{}",
            snap.plain_line()
        );
        // Three never start: no line each (redraw prints none), one at the end.
        for _ in 0..3 {
            p.not_run(&result(TaskStatus::Error, true));
        }
        let line = p.final_line().expect("one line for the tasks not run");
        assert!(
            line.starts_with("progress: 1/5 done, 0 running, 0 failed, 3 not run; elapsed "),
            "{line}"
        );
        assert_eq!(p.final_line(), None, "printed once");
    }
}
