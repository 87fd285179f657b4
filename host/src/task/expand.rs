//! `$VAR` / `${VAR}` expansion of task-file strings from the host environment, used by
//! the `agent:` section (plugin paths) and the `sandbox:` section (template sources).

/// Expands `$VAR` and `${VAR}` from the host environment; `Err(name)` for an unset one.
pub(crate) fn expand_env(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => return Err(inner.to_string()),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
        } else {
            out.push_str(&std::env::var(name).map_err(|_| name.to_string())?);
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_expansion() {
        // SAFETY: tests in this module read only this variable.
        unsafe { std::env::set_var("CODER_EVAL_TEST_PLUGIN_ROOT", "/opt/p") };
        assert_eq!(
            expand_env("$CODER_EVAL_TEST_PLUGIN_ROOT/a").unwrap(),
            "/opt/p/a"
        );
        assert_eq!(
            expand_env("${CODER_EVAL_TEST_PLUGIN_ROOT}x").unwrap(),
            "/opt/px"
        );
        assert_eq!(expand_env("no vars").unwrap(), "no vars");
        assert_eq!(
            expand_env("$CODER_EVAL_SURELY_UNSET_VAR/x").unwrap_err(),
            "CODER_EVAL_SURELY_UNSET_VAR"
        );
    }
}
