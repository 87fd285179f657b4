use super::*;

fn attempt(n: u32, cost: Option<f64>, cost_status: TotalsStatus) -> CostAttempt {
    CostAttempt {
        attempt: n,
        session_id: Some("s".into()),
        resumed: n > 1,
        settings: AttemptSettings::default(),
        agent_seconds: Some(1.0),
        launcher_error: None,
        totals_scope: Some(TotalsScope::PerSession),
        usage_totals_scope: None,
        cost_usd: cost,
        usage: Some(Usage {
            input_tokens: 10,
            output_tokens: 2,
            cache_read_tokens: 0,
            cache_write_tokens: Some(0),
        }),
        cost_status,
        usage_status: TotalsStatus::Complete,
        reasons: Vec::new(),
        gateway_cost: None,
        provider_reports: ProviderReports::default(),
    }
}

#[test]
fn attempts_are_summed_once_each() {
    // B40's session: the first process spent 0.363044, the resumed one 0.023419 (its
    // own figure, the collector's reading of the running total 0.386463).
    let r = CostRecord::new(
        "t",
        "claude-code",
        vec![
            attempt(1, Some(0.363044), TotalsStatus::Complete),
            attempt(2, Some(0.023419), TotalsStatus::Complete),
        ],
    );
    assert_eq!(r.total_cost_usd, Some(0.386463));
    assert_eq!(r.cost_status, TotalsStatus::Complete);
    assert_eq!(r.usage.unwrap().input_tokens, 20);
    assert_eq!(r.summary().attempts, 2);
}

#[test]
fn statuses_combine_and_unknown_is_null() {
    let ambiguous = CostRecord::new(
        "t",
        "h",
        vec![
            attempt(1, Some(0.1), TotalsStatus::Complete),
            attempt(2, None, TotalsStatus::Ambiguous),
        ],
    );
    assert_eq!(ambiguous.cost_status, TotalsStatus::Ambiguous);
    assert_eq!(ambiguous.total_cost_usd, None);

    let missing = CostRecord::new("t", "h", vec![attempt(1, None, TotalsStatus::NotReported)]);
    assert_eq!(missing.cost_status, TotalsStatus::NotReported);
    assert_eq!(missing.total_cost_usd, None, "absent is not zero");

    let partial = CostRecord::new(
        "t",
        "h",
        vec![
            attempt(1, Some(0.25), TotalsStatus::Complete),
            attempt(2, None, TotalsStatus::NotReported),
        ],
    );
    assert_eq!(partial.cost_status, TotalsStatus::Partial);
    assert_eq!(partial.total_cost_usd, Some(0.25));
    assert_eq!(
        TotalsStatus::combine([]),
        TotalsStatus::NotReported,
        "no attempt reports nothing"
    );
}

#[test]
fn a_launch_that_failed_reports_nothing_and_says_why() {
    let a = CostAttempt::new(
        1,
        None,
        AttemptSettings::default(),
        None,
        Some("launch: claude not found".into()),
    );
    assert_eq!(
        (a.cost_usd, a.usage, a.cost_status, a.usage_status),
        (
            None,
            None,
            TotalsStatus::NotReported,
            TotalsStatus::NotReported
        )
    );
    assert!(a.reasons[0].contains("claude not found"), "{:?}", a.reasons);
    let json = serde_json::to_value(CostRecord::new("t", "h", vec![a])).unwrap();
    assert_eq!(json["cost_version"], 1);
    assert_eq!(json["total_cost_usd"], serde_json::Value::Null);
    assert_eq!(json["cost_status"], "not_reported");
    assert_eq!(
        json["attempts"][0]["launcher_error"],
        "launch: claude not found"
    );
}

/// `gateway_cost` is summed over the attempts that have one, its status combined (a
/// partial attempt makes the sum partial), and absent when no attempt was priced.
#[test]
fn the_gateways_priced_cost_is_summed_beside_the_clis() {
    let priced = |usd: Option<f64>, status| GatewayCost {
        cost_usd: usd,
        cost_source: "price_table".into(),
        price_table: "p.yaml".into(),
        cost_status: status,
    };
    let mut a = attempt(1, Some(0.5), TotalsStatus::Complete);
    a.gateway_cost = Some(priced(Some(0.1), TotalsStatus::Complete));
    let mut b = attempt(2, Some(0.25), TotalsStatus::Complete);
    b.gateway_cost = Some(priced(Some(0.2), TotalsStatus::Partial));
    let r = CostRecord::new("t", "h", vec![a.clone(), b]);
    assert_eq!(r.total_cost_usd, Some(0.75), "the CLI's figure is kept");
    let g = r.gateway_cost.expect("priced");
    assert_eq!(g.cost_usd, Some(0.3));
    assert_eq!(g.cost_status, TotalsStatus::Partial);
    assert_eq!(
        (g.cost_source.as_str(), g.price_table.as_str()),
        ("price_table", "p.yaml")
    );
    let plain = CostRecord::new(
        "t",
        "h",
        vec![attempt(1, Some(0.5), TotalsStatus::Complete)],
    );
    assert_eq!(plain.gateway_cost, None);
    assert!(
        serde_json::to_value(&plain)
            .unwrap()
            .get("gateway_cost")
            .is_none()
    );
    // None priced: null, never 0.
    a.gateway_cost = Some(priced(None, TotalsStatus::NotReported));
    let none = CostRecord::new("t", "h", vec![a]).gateway_cost.unwrap();
    assert_eq!(
        (none.cost_usd, none.cost_status),
        (None, TotalsStatus::NotReported)
    );
}

/// Trial 14u finding 3: a partial usage none of whose attempts has a figure (the stop cut
/// off a CLI reporting at the end) is unknown (`null`), never a sum of 0.
#[test]
fn a_partial_usage_without_any_figure_is_null_not_zero() {
    let mut a = attempt(1, None, TotalsStatus::NotReported);
    a.usage = None;
    a.usage_status = TotalsStatus::Partial;
    let record = CostRecord::new("t", "continue", vec![a]);
    assert_eq!(record.usage_status, TotalsStatus::Partial);
    assert_eq!(record.usage, None);
}
