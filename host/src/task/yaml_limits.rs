//! Bounds on a task file's YAML checked before it is parsed. The YAML parser's work grows
//! with the square of the flow nesting depth (`[[[[…` or `{a: {a: …`): 20 000 levels (a
//! 40 KB file) take over a second in a release build, 100 000 over half a minute, so a
//! hostile or broken file could stall `run` or `check` for hours before the parser's own
//! depth limit (128) rejected it. Every flow collection opens with `[` or `{`, so their
//! count bounds the depth whatever the quoting; a task file never needs many (larger data
//! belongs in a dataset file).

/// The most `[` and `{` characters a task file may hold.
pub(crate) const MAX_FLOW_OPENERS: usize = 10_000;

/// `Err(message)` when `text` holds more flow-collection openers than
/// [`MAX_FLOW_OPENERS`].
pub(crate) fn check(text: &str) -> Result<(), String> {
    let openers = text.bytes().filter(|&b| b == b'[' || b == b'{').count();
    if openers > MAX_FLOW_OPENERS {
        return Err(format!(
            "holds {openers} `[` and `{{` characters, more than the {MAX_FLOW_OPENERS} a task \
             file may hold (nesting that deep stalls the YAML parser); move large data to a \
             dataset file"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_every_opener_whatever_the_quoting() {
        assert!(super::check("a: [1, {b: 2}]\n").is_ok());
        let quoted = format!("a: \"{}\"\n", "[".repeat(super::MAX_FLOW_OPENERS + 1));
        let err = super::check(&quoted).unwrap_err();
        assert!(err.contains("10001 `[` and `{`"), "{err}");
    }
}
