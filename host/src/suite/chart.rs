//! Interval charts for the variant comparison (SVG, drawn by the host; no scripts, no
//! network): one row per estimate, a dot at its mean and a whisker over its 95%
//! interval, on a shared axis. Every label is escaped (maud).

use crate::results::MeanEstimate;
use maud::{Markup, html};

const LABEL: f64 = 160.0;
const WIDTH: f64 = 480.0;
const ROW: f64 = 22.0;

/// One row of a chart: a label and its estimate (`None`: nothing graded, drawn as such).
pub(crate) struct Row<'a> {
    pub label: &'a str,
    pub estimate: Option<&'a MeanEstimate>,
}

/// The chart of `rows` on the axis `[low, high]` (fractions: 0.0–1.0 for pass rates,
/// −1.0–1.0 for a difference), with a reference line at `zero` when it is on the axis.
/// Class `estimate` marks each drawn row (the browser test counts them).
pub(crate) fn intervals(rows: &[Row], low: f64, high: f64, zero: Option<f64>) -> Markup {
    let span = (high - low).max(f64::EPSILON);
    let x = |v: f64| LABEL + (v.clamp(low, high) - low) / span * WIDTH;
    let height = ROW * rows.len() as f64 + 24.0;
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    html! {
        svg.intervals xmlns="http://www.w3.org/2000/svg" width=(LABEL + WIDTH + 30.0) height=(height)
            role="img" aria-label="estimates with 95% intervals" {
            @if let Some(z) = zero.filter(|z| (low..=high).contains(z)) {
                line x1=(x(z)) x2=(x(z)) y1="0" y2=(height - 18.0) stroke="#999" stroke-dasharray="3,3" {}
            }
            @for (i, row) in rows.iter().enumerate() {
                @let y = ROW * i as f64 + ROW / 2.0;
                text x="0" y=(y + 4.0) { (row.label) }
                @match row.estimate {
                    Some(m) => g.estimate {
                        title {
                            (row.label) ": " (pct(m.mean))
                            @if let Some(ci) = &m.ci95 { " [" (pct(ci.low)) ", " (pct(ci.high)) "]" }
                            " over " (m.n)
                        }
                        @if let Some(ci) = &m.ci95 {
                            line x1=(x(ci.low)) x2=(x(ci.high)) y1=(y) y2=(y) stroke="#333" stroke-width="2" {}
                            line x1=(x(ci.low)) x2=(x(ci.low)) y1=(y - 5.0) y2=(y + 5.0) stroke="#333" {}
                            line x1=(x(ci.high)) x2=(x(ci.high)) y1=(y - 5.0) y2=(y + 5.0) stroke="#333" {}
                        }
                        circle cx=(x(m.mean)) cy=(y) r="4" fill="#2a6b2a" {}
                    },
                    None => text x=(LABEL) y=(y + 4.0) fill="#777" { "nothing graded" },
                }
            }
            text x=(LABEL) y=(height - 4.0) { (pct(low)) }
            text x=(LABEL + WIDTH) y=(height - 4.0) text-anchor="end" { (pct(high)) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Interval;

    #[test]
    fn one_drawn_row_per_estimate_and_labels_escaped() {
        let m = MeanEstimate {
            mean: 0.5,
            n: 3,
            se: Some(0.1),
            df: Some(2),
            ci95: Some(Interval {
                low: 0.2,
                high: 0.8,
            }),
        };
        let svg = intervals(
            &[
                Row {
                    label: "<a>",
                    estimate: Some(&m),
                },
                Row {
                    label: "b",
                    estimate: None,
                },
            ],
            0.0,
            1.0,
            None,
        )
        .into_string();
        assert_eq!(svg.matches("<g class=\"estimate\"").count(), 1, "{svg}");
        assert!(svg.contains("&lt;a&gt;") && !svg.contains("<a>"), "{svg}");
        assert!(svg.contains("nothing graded"));
        // The mean sits halfway along the axis.
        assert!(
            svg.contains(&format!("cx=\"{}\"", LABEL + WIDTH / 2.0)),
            "{svg}"
        );
    }
}
