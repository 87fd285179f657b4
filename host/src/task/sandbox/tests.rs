use super::*;

#[test]
fn ignore_rules() {
    assert!(name_matches("x.pyc", "*.pyc"));
    assert!(name_matches("test_a.py", "test_*"));
    assert!(!name_matches("distx", "dist"));
    let list = ignore_list(&["!dist".into(), "*.bak".into()]);
    assert!(!list.iter().any(|p| p == "dist"));
    assert!(list.iter().any(|p| p == "*.bak"));
    assert!(check_ignore_pattern(" ! ").is_err());
}

#[test]
fn steps_in_both_forms_with_coder_eval_defaults() {
    let steps: Vec<Step> = serde_yaml_ng::from_str(
        "- echo a\n- {command: echo b, timeout: 5, fail_on_error: false}\n",
    )
    .unwrap();
    assert_eq!(steps[0].timeout, Duration::from_secs(30));
    assert!(steps[0].fail_on_error);
    assert_eq!(steps[1].timeout, Duration::from_secs(5));
    assert!(!steps[1].fail_on_error);
    for bad in [
        "- {command: x, timeout: 301}",
        "- {command: x, timeout: 0}",
        "- 3",
        "- {cmd: x}",
    ] {
        assert!(serde_yaml_ng::from_str::<Vec<Step>>(bad).is_err(), "{bad}");
    }
}
