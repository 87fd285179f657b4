use super::*;

fn items<R: std::io::BufRead>(mut reader: Reader<R>) -> Vec<Item> {
    std::iter::from_fn(|| reader.next_item().unwrap()).collect()
}

#[test]
fn round_trips_any_bytes() {
    let dir = std::env::temp_dir().join(format!("ce-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.jsonl");
    let mut w = RecordingWriter::create(
        &path,
        &Header {
            harness: Some("claude-code".into()),
            argv: vec!["claude".into()],
            ..Default::default()
        },
    )
    .unwrap();
    w.stdout_line(10, b"{\"a\":1}", false).unwrap();
    w.stdout_line(20, b"\xff\xfe bad", false).unwrap();
    w.stderr_chunk(25, b"warn\n").unwrap();
    w.held_call(27, 2, StopReason::MaxTurns, None).unwrap();
    w.held_call(27, 2, StopReason::MaxToolCalls, Some(3))
        .unwrap();
    w.stop(28, StopReason::TurnTimeout).unwrap();
    w.stdout_line(30, b"{\"tru", true).unwrap();
    w.exit(ExitStatus {
        stamp_us: 40,
        code: Some(1),
        signal: None,
        turn_limit: false,
    })
    .unwrap();
    drop(w);
    let reader = Reader::open(&path).unwrap();
    assert_eq!(
        reader.header().unwrap().harness.as_deref(),
        Some("claude-code")
    );
    let line = |stamp_us, bytes: &[u8], source_line| StampedLine {
        stamp_us,
        bytes: bytes.to_vec(),
        source_line,
    };
    assert_eq!(
        items(reader),
        [
            Item::Line(line(10, b"{\"a\":1}", 1)),
            Item::Line(line(20, b"\xff\xfe bad", 2)),
            Item::Stderr(b"warn\n".to_vec()),
            Item::HeldCall(HeldCall {
                stamp_us: 27,
                turn: 2,
                reason: StopReason::MaxTurns,
                tool_calls_before: None,
                after_lines: 2
            }),
            Item::HeldCall(HeldCall {
                stamp_us: 27,
                turn: 2,
                reason: StopReason::MaxToolCalls,
                tool_calls_before: Some(3),
                after_lines: 2
            }),
            Item::Stop(RecordedStop {
                stamp_us: 28,
                reason: StopReason::TurnTimeout,
                after_lines: 2
            }),
            Item::Truncated(line(30, b"{\"tru", 3)),
            Item::Exit(ExitStatus {
                stamp_us: 40,
                code: Some(1),
                signal: None,
                turn_limit: false
            }),
        ]
    );
    // The stop reads back with the spelling older recordings wrote.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#"{"t":"stop","us":28,"reason":"turn_timeout"}"#),
        "{text}"
    );
}

#[test]
fn model_calls_round_trip_after_the_exit() {
    let dir = std::env::temp_dir().join(format!("ce-rec-gw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.jsonl");
    let header = Header {
        gateway: true,
        ..Default::default()
    };
    let mut w = RecordingWriter::create(&path, &header).unwrap();
    w.stdout_line(10, b"{}", false).unwrap();
    w.exit(ExitStatus {
        stamp_us: 40,
        code: Some(0),
        signal: None,
        turn_limit: false,
    })
    .unwrap();
    drop(w);
    let call = crate::gateway::ModelCall {
        seq: 1,
        us: 5,
        first_byte_us: Some(7),
        end_us: Some(9),
        method: "POST".into(),
        path: "/v1/responses".into(),
        api: Some(coder_eval_scripted_model::Api::Responses),
        kind: crate::gateway::CallKind::Main,
        turn: Some(0),
        counted_turn: None,
        stream: Some(true),
        model: Some("gpt-x".into()),
        status: Some(200),
        held: false,
        over_budget: None,
        stopped: false,
        cut: false,
        refused: false,
        failed: false,
        error: None,
        usage: Some(crate::gateway::ApiUsage {
            input_tokens: Some(3),
            ..Default::default()
        }),
        cost_usd: None,
        unpriced: None,
        response_bytes: 12,
        request_body: None,
        response_body: None,
    };
    let mut w = RecordingWriter::append(&path).unwrap();
    w.model_call(&call).unwrap();
    drop(w);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().next().unwrap().contains(r#""gateway":true"#));
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with(r#"{"t":"model_call","seq":1,"us":5"#),
        "{text}"
    );
    let reader = Reader::open(&path).unwrap();
    assert!(reader.header().unwrap().gateway);
    let got = items(reader);
    assert_eq!(got.last(), Some(&Item::ModelCall(Box::new(call))));
    assert_eq!(got.len(), 3);
}

#[test]
fn plain_capture_gets_synthetic_stamps() {
    let stamps: Vec<(bool, u64)> = items(Reader::plain(b"{}\n{}\n{\"x\""))
        .into_iter()
        .map(|item| match item {
            Item::Line(l) => (true, l.stamp_us),
            Item::Truncated(l) => (false, l.stamp_us),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(stamps, [(true, 1000), (true, 2000), (false, 3000)]);
    assert!(items(Reader::plain(b"")).is_empty());
    // A blank line of a capture is a line too.
    assert_eq!(items(Reader::plain(b"\n\n")).len(), 2);
}

#[test]
fn side_files_round_trip_after_the_exit() {
    let dir = std::env::temp_dir().join(format!("ce-rec-side-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.jsonl");
    let mut w = RecordingWriter::create(&path, &Header::default()).unwrap();
    w.stdout_line(10, b"{}", false).unwrap();
    w.exit(ExitStatus {
        stamp_us: 20,
        code: Some(0),
        signal: None,
        turn_limit: false,
    })
    .unwrap();
    w.side_file(20, "{{home}}/usage.json", Some(b"{\"n\":1}"))
        .unwrap();
    w.side_file(20, "{{home}}/bin", Some(b"\xff\x00")).unwrap();
    w.side_file(20, "{{home}}/none", None).unwrap();
    drop(w);
    let read = items(Reader::open(&path).unwrap());
    assert_eq!(
        read[2..],
        [
            Item::SideFile("{{home}}/usage.json".into(), Some(b"{\"n\":1}".to_vec())),
            Item::SideFile("{{home}}/bin".into(), Some(b"\xff\x00".to_vec())),
            Item::SideFile("{{home}}/none".into(), None),
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#"{"t":"side_file","us":20,"path":"{{home}}/none"}"#),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
