//! The report matrix's filters and sorting: by harness (or variant) column, by status,
//! by task tag, and by clicking a header. One inline script (no network), over the
//! matrix's markup: `table#matrix`, each task row's `data-tags` (a JSON array), each cell's status class
//! (`SUCCESS`, `FAILURE`, ...) or, for replicates, its `data-statuses`. Without the script the page shows the whole matrix.

use crate::results::{TaskResult, TaskStatus};
use maud::{Markup, PreEscaped, html};

/// The statuses a cell can show, for the status filter.
const STATUSES: [TaskStatus; 8] = [
    TaskStatus::Success,
    TaskStatus::Failure,
    TaskStatus::MaxTurnsExhausted,
    TaskStatus::TokenBudgetExceeded,
    TaskStatus::CostBudgetExceeded,
    TaskStatus::Timeout,
    TaskStatus::Error,
    TaskStatus::Skipped,
];

/// The tags of `task` as its results carry them, as a JSON array (a tag may hold spaces).
pub(crate) fn tags_of(task: &str, results: &[TaskResult]) -> String {
    let tags = results
        .iter()
        .find(|r| r.task_id == task)
        .map(|r| r.tags.clone())
        .unwrap_or_default();
    serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into())
}

/// The filter controls above the matrix.
pub(crate) fn controls(columns: &[&str], results: &[TaskResult]) -> Markup {
    let mut tags: Vec<&str> = results
        .iter()
        .flat_map(|r| r.tags.iter().map(String::as_str))
        .collect();
    tags.sort_unstable();
    tags.dedup();
    html! {
        p.filters {
            label { "column " select #f-column {
                option value="" { "all" }
                @for c in columns { option value=(c) { (c) } }
            } }
            " " label { "status " select #f-status {
                option value="" { "any" }
                @for s in STATUSES { option value=(s.as_str()) { (s.as_str()) } }
            } }
            " " label { "tag " select #f-tag {
                option value="" { "any" }
                @for t in &tags { option value=(t) { (t) } }
            } }
            " " span.muted #f-shown {}
            " " span.muted { "(click a header to sort)" }
        }
    }
}

/// The script (inline; reads only the page).
pub(crate) fn script() -> Markup {
    html! { script { (PreEscaped(SCRIPT)) } }
}

const SCRIPT: &str = r#"
(function () {
  var table = document.getElementById("matrix");
  if (!table) return;
  var header = table.rows[0];
  var names = Array.prototype.map.call(header.cells, function (c) { return c.textContent; });
  var sel = function (id) { return document.getElementById(id); };
  function apply() {
    var column = sel("f-column").value, status = sel("f-status").value, tag = sel("f-tag").value;
    var shown = 0;
    for (var i = 0; i < table.rows.length; i++) {
      var row = table.rows[i];
      for (var j = 1; j < row.cells.length; j++) {
        row.cells[j].style.display = column && names[j] !== column ? "none" : "";
      }
      if (i === 0) continue;
      var tags = JSON.parse(row.getAttribute("data-tags") || "[]");
      var ok = !tag || tags.indexOf(tag) >= 0;
      if (ok && status) {
        ok = false;
        for (var k = 1; k < row.cells.length; k++) {
          var cell = row.cells[k];
          if (cell.style.display === "none") continue;
          var listed = cell.getAttribute("data-statuses");
          if (listed ? JSON.parse(listed).indexOf(status) >= 0 : cell.classList.contains(status)) ok = true;
        }
      }
      row.style.display = ok ? "" : "none";
      if (ok) shown++;
    }
    sel("f-shown").textContent = shown + " of " + (table.rows.length - 1) + " tasks shown";
  }
  ["f-column", "f-status", "f-tag"].forEach(function (id) { sel(id).addEventListener("change", apply); });
  var order = {};
  Array.prototype.forEach.call(header.cells, function (th, j) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      order[j] = !order[j];
      var rows = Array.prototype.slice.call(table.rows, 1);
      rows.sort(function (a, b) {
        var x = a.cells[j].textContent, y = b.cells[j].textContent;
        return (order[j] ? 1 : -1) * x.localeCompare(y, undefined, { numeric: true });
      });
      rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
    });
  });
  apply();
})();
"#;
