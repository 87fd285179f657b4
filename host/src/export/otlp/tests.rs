//! Endpoint handling of the OTLP export.

use super::{check_endpoint, plain, traces_url};

#[test]
fn endpoints_are_checked_before_anything_runs() {
    assert!(check_endpoint("http://127.0.0.1:4318").is_ok());
    assert!(check_endpoint("https://collector.example/otlp").is_ok());
    for bad in ["127.0.0.1:4318", "ftp://h/x", "http://", "nonsense"] {
        assert!(check_endpoint(bad).is_err(), "{bad}");
    }
}

#[test]
fn an_http_status_is_said_plainly() {
    assert_eq!(
        plain(
            "Operation failed: InternalFailure(\"OtlpHttpClient.Export failed with status 501 ...\")"
        ),
        "the collector answered HTTP 501"
    );
}

#[test]
fn a_base_url_gets_the_traces_path_and_a_traces_url_is_kept() {
    assert_eq!(
        traces_url("http://127.0.0.1:4318"),
        "http://127.0.0.1:4318/v1/traces"
    );
    assert_eq!(traces_url("http://h:4318/"), "http://h:4318/v1/traces");
    assert_eq!(traces_url("http://h/v1/traces"), "http://h/v1/traces");
    // A query stays a query.
    assert_eq!(
        traces_url("http://h/?token=a"),
        "http://h/v1/traces?token=a"
    );
    assert_eq!(
        super::shown("http://user:secret@h:1/v1/traces"),
        "http://h:1/v1/traces"
    );
}
