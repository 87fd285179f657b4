//! The price table at the gateway: each call priced as it is recorded, and `max_usd`
//! held on the priced cost like a token budget.

use super::*;

/// With a price table, `max_usd` is counted on each call's priced cost as it ends: once
/// over, the next call is held (never forwarded) with the `max_usd` reason, and each
/// record carries its `cost_usd`. Without a table the same budget holds nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_the_priced_cost_went_over_max_usd_is_held() {
    let yaml = "name: b\nreplies:\n  - text: the first reply is about ten tokens long here\n  - text: the second reply is about ten tokens long too\n  - text: three\n";
    // One USD per output token, input free: the cost is the output tokens.
    let table = PriceTable::parse(
        "claude-x: {input: 0, output: 1000000}\n",
        std::path::Path::new("p.yaml"),
    )
    .unwrap();
    let budgets = Budgets {
        max_usd: Some(12.0),
        ..Budgets::default()
    };
    for priced in [true, false] {
        let behind = scripted(yaml).await;
        let mut config = GatewayConfig::new(behind.base_url());
        config.budgets = budgets;
        config.price_table = priced.then(|| table.clone());
        let gw = Gateway::start(config).await.unwrap();
        let mut held = gw.held();
        let t0 = Instant::now();
        for turn in 0..2 {
            let (path, body) = requests(turn).remove(0);
            assert_eq!(post(&gw.base_url(), path, &body).await.0, 200);
        }
        let (_, third) = requests(2).remove(0);
        let base = gw.base_url();
        let pending = tokio::spawn(async move { post(&base, "/v1/messages", &third).await });
        if priced {
            tokio::time::timeout(
                std::time::Duration::from_secs(20),
                held.wait_for(Option::is_some),
            )
            .await
            .expect("the third call was held")
            .unwrap();
            assert_eq!(
                held.borrow().as_ref().map(|h| h.reason),
                Some(coder_eval_scripted_model::HoldReason::MaxUsd)
            );
        } else {
            assert_eq!(pending.await.unwrap().0, 200, "no table: max_usd not held");
            assert_eq!(gw.budgets().max_usd, None);
            let calls = gw.shutdown(t0).await;
            assert!(calls.iter().all(|c| c.cost_usd.is_none()), "{calls:?}");
            continue;
        }
        let calls = gw.shutdown(t0).await;
        assert_eq!(pending.await.unwrap().0, 503);
        assert_eq!(behind.requests().len(), 2, "the third call not forwarded");
        for c in &calls[..2] {
            let out = c.usage.and_then(|u| u.output_tokens).unwrap();
            assert_eq!(c.cost_usd, Some(out as f64), "{c:?}");
        }
        assert_eq!(calls[2].over_budget, Some(BudgetKind::MaxUsd));
        assert_eq!(
            (calls[2].cost_usd, calls[2].unpriced.as_ref()),
            (None, None)
        );
        let breach = budget_breach(&calls, &budgets).expect("a breach");
        assert_eq!((breach.budget, breach.event_index), (BudgetKind::MaxUsd, 2));
    }
}
