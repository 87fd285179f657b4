//! The framer against a model of it, on arbitrary bytes cut at arbitrary points (proptest:
//! `PROPTEST_CASES` raises the case count for a long run), and the cases a CLI's stdout
//! can hold: 16 MiB lines, a stream without newlines, NUL bytes, invalid UTF-8, CR/LF.

use super::LineFramer;
use crate::turn::recording::{Item, Reader};
use proptest::prelude::*;

/// What the framer must produce for `input`, whatever the chunks: (lines, rest).
fn model(input: &[u8], max_line: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
    let max_piece = max_line + 1;
    let mut lines = Vec::new();
    let segments: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let (last, ended) = segments
        .split_last()
        .expect("split yields one segment at least");
    for segment in ended {
        if segment.is_empty() {
            lines.push(Vec::new());
        }
        lines.extend(segment.chunks(max_piece).map(<[u8]>::to_vec));
    }
    let mut pieces: Vec<Vec<u8>> = last.chunks(max_piece).map(<[u8]>::to_vec).collect();
    let rest = pieces.pop();
    lines.extend(pieces);
    (lines, rest)
}

/// Feeds `input` cut at `cuts` (offsets, any order) and returns (lines, rest), checking
/// the memory bound after every chunk.
fn frame(input: &[u8], cuts: &[usize], max_line: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
    let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(input.len())).collect();
    cuts.push(0);
    cuts.push(input.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut framer = LineFramer::new(max_line);
    let mut lines = Vec::new();
    for (i, pair) in cuts.windows(2).enumerate() {
        framer
            .push(&input[pair[0]..pair[1]], i as u64, |line| {
                assert!(line.len() <= max_line + 1, "a piece over the bound");
                assert!(!line.contains(&b'\n'), "a newline inside a line");
                lines.push(line.to_vec());
                Ok::<(), ()>(())
            })
            .unwrap();
        assert!(
            framer.held() <= max_line + 1,
            "held {} bytes",
            framer.held()
        );
    }
    (lines, framer.rest().map(|(_, b)| b.to_vec()))
}

/// Bytes rich in what breaks framers: newlines, CRs, NULs, invalid UTF-8.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            3 => Just(b'\n'),
            1 => Just(b'\r'),
            1 => Just(0u8),
            1 => Just(0xffu8),
            1 => Just(0xc3u8),
            6 => any::<u8>(),
        ],
        0..600,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Cut anywhere, the stream frames to the same lines as whole, and as the model says.
    #[test]
    fn any_cut_gives_the_lines_of_the_whole(
        input in stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
        max_line in prop_oneof![0usize..8, 8usize..64, Just(1 << 20)],
    ) {
        let cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        let whole = frame(&input, &[], max_line);
        let cut = frame(&input, &cuts, max_line);
        prop_assert_eq!(&cut, &whole);
        prop_assert_eq!(&whole, &model(&input, max_line));
    }

    /// One byte at a time is the worst cut; nothing is lost and nothing is added: the
    /// lines joined with their newlines (a cut piece has none) give back the input.
    #[test]
    fn byte_by_byte_loses_nothing(input in stream(), max_line in 0usize..32) {
        let cuts: Vec<usize> = (0..input.len()).collect();
        let (lines, rest) = frame(&input, &cuts, max_line);
        prop_assert_eq!(&(lines.clone(), rest.clone()), &model(&input, max_line));
        let total: usize = lines.iter().map(Vec::len).sum::<usize>() + rest.map_or(0, |r| r.len());
        let newlines = input.iter().filter(|&&b| b == b'\n').count();
        prop_assert_eq!(total + newlines, input.len());
    }

    /// Replay frames a plain capture exactly as the live framer framed the stream, so a
    /// recording of a cut line replays to the same lines.
    #[test]
    fn replay_reads_a_capture_as_the_live_framer_cut_it(input in stream(), max_line in 0usize..40) {
        let (lines, rest) = frame(&input, &[], max_line);
        let mut reader = Reader::plain(&input).with_max_line(max_line);
        let mut read = Vec::new();
        let mut truncated = None;
        while let Some(item) = reader.next_item().unwrap() {
            match item {
                Item::Line(l) => read.push(l.bytes),
                Item::Truncated(l) => truncated = Some(l.bytes),
                other => panic!("unexpected {other:?}"),
            }
        }
        prop_assert_eq!(read, lines);
        prop_assert_eq!(truncated, rest);
    }
}

fn collect(framer: &mut LineFramer, chunk: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    framer
        .push(chunk, 7, |l| {
            lines.push(l.to_vec());
            Ok::<(), ()>(())
        })
        .unwrap();
    lines
}

#[test]
fn cr_lf_nul_and_invalid_utf8_pass_through_untouched() {
    let mut framer = LineFramer::new(1 << 20);
    let lines = collect(&mut framer, b"a\r\nb\rc\n\0\xff\xfe\n\r\n\n\r");
    assert_eq!(
        lines,
        [&b"a\r"[..], b"b\rc", b"\0\xff\xfe", b"\r", b""].map(<[u8]>::to_vec)
    );
    assert_eq!(framer.rest(), Some((7, &b"\r"[..])));
}

#[test]
fn a_16_mib_line_in_odd_chunks_is_one_line() {
    let mut line: Vec<u8> = (0..16u32 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    line.push(b'\n');
    let mut framer = LineFramer::new(super::DEFAULT_MAX_LINE_BYTES);
    let mut lines = Vec::new();
    for chunk in line.chunks(65_521) {
        lines.extend(collect(&mut framer, chunk));
    }
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].len(), 16 << 20);
    assert_eq!(&lines[0][..], &line[..line.len() - 1]);
    assert_eq!(framer.rest(), None);
}

#[test]
fn an_endless_line_holds_at_most_the_cap() {
    // 1 MiB cap, 40 MiB without a newline: the host holds at most cap + 1 bytes, and every
    // piece it hands on is cap + 1 bytes (over the cap: the pipeline's diagnostic).
    let cap = 1 << 20;
    let mut framer = LineFramer::new(cap);
    let chunk = vec![b'x'; 64 * 1024];
    let mut pieces = 0;
    for _ in 0..640 {
        for piece in collect(&mut framer, &chunk) {
            assert_eq!(piece.len(), cap + 1);
            pieces += 1;
        }
        assert!(framer.held() <= cap + 1);
    }
    assert_eq!(pieces, (40 << 20) / (cap + 1));
    let (stamp, rest) = framer.rest().unwrap();
    assert_eq!(stamp, 7);
    assert_eq!(pieces * (cap + 1) + rest.len(), 40 << 20);
}

#[test]
fn a_line_of_exactly_the_cut_size_keeps_its_newline() {
    let mut framer = LineFramer::new(3);
    assert_eq!(collect(&mut framer, b"abcd"), Vec::<Vec<u8>>::new());
    assert_eq!(
        collect(&mut framer, b"\nef\n"),
        [b"abcd".to_vec(), b"ef".to_vec()]
    );
    assert_eq!(framer.rest(), None);
}

/// The README's `turn/` row puts the line cap in `framer.rs`, with its size in MiB: the
/// constant is defined there, and the size is the constant's.
#[test]
fn the_readme_puts_the_line_cap_where_it_is() {
    let readme = include_str!("../../../../README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `host/src/turn/` |"))
        .expect("the README's turn/ row");
    let mib = super::DEFAULT_MAX_LINE_BYTES >> 20;
    assert!(
        row.contains(&format!(
            "`framer.rs` (stdout bytes into lines; the {mib} MiB line cap, `DEFAULT_MAX_LINE_BYTES`"
        )),
        "{row}"
    );
    assert!(include_str!("../framer.rs").contains("pub(crate) const DEFAULT_MAX_LINE_BYTES"));
}
