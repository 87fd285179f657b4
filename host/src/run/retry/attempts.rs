//! The attempts a unit's result folder keeps (`attempts/<n>/`): moving one there, the
//! highest number kept, an attempt's record.

use super::ATTEMPTS_DIR;
use crate::results::{InfraRetryRecord, TaskResult};
use crate::suite::infra::InfraCause;
use std::path::Path;
use std::time::Duration;

/// The record of attempt `attempt` (1-based, counting the attempts kept by earlier runs
/// into the folder), kept in `path`, run again after `delay`.
pub(super) fn retry_record(
    attempt: u32,
    cause: InfraCause,
    result: &TaskResult,
    delay: Duration,
    path: String,
) -> InfraRetryRecord {
    InfraRetryRecord {
        attempt,
        cause: cause.name().to_string(),
        http_status: match cause {
            InfraCause::ApiStatus(s) | InfraCause::ApiOutage(s) => Some(s),
            _ => None,
        },
        error: result.error.clone(),
        error_kind: result.error_kind.clone(),
        cost_usd: result.cost.as_ref().and_then(|c| c.total_cost_usd),
        delay_ms: delay.as_millis() as u64,
        path,
    }
}

/// The highest `<n>` of the `attempts/<n>/` folders in `dir` (0 when there are none).
pub(super) fn kept_attempts(dir: &Path) -> u32 {
    std::fs::read_dir(dir.join(ATTEMPTS_DIR))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .unwrap_or(0)
}

/// Moves everything in `dir` but `attempts/` into `to` (`dir/attempts/<n>`).
pub(super) fn keep_attempt(dir: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() == ATTEMPTS_DIR {
            continue;
        }
        std::fs::rename(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}
