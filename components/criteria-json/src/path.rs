//! The path language of `json_check` assertions: the part of JMESPath that names one
//! value, plus `length()` and JSON Pointer.
//!
//! - `a.b.c` — object keys (a key with other characters than letters, digits, `_`, `-`
//!   and `$` is quoted: `"my key".x`);
//! - `items[0]`, `items[-1]` — array elements, negative from the end;
//! - `@` (or an empty expression) — the whole document;
//! - `length(expr)` — characters of a string, elements of an array, keys of an object;
//! - `/a/b/0` — a JSON Pointer (RFC 6901) when the expression starts with `/`.
//!
//! A key or index that is not there gives `null`, as in JMESPath, so `exists` and
//! `equals: null` can test for it. Projections (`[*]`, filters) are not supported.

use serde_json::Value;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Steps from the root.
    Path(Vec<Step>),
    /// `length(expr)`.
    Length(Box<Expr>),
    /// A JSON Pointer.
    Pointer(String),
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(i64),
}

/// Parses `text`. Errors say where it went wrong.
pub fn parse(text: &str) -> Result<Expr, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('/') {
        return Ok(Expr::Pointer(trimmed.to_string()));
    }
    let mut parser = Parser {
        chars: trimmed.chars().collect(),
        pos: 0,
    };
    let expr = parser.expr()?;
    if parser.pos != parser.chars.len() {
        return Err(format!(
            "unexpected `{}` at character {}",
            parser.chars[parser.pos],
            parser.pos + 1
        ));
    }
    Ok(expr)
}

/// The value `expr` names in `doc` (`null` when absent).
pub fn eval(expr: &Expr, doc: &Value) -> Value {
    match expr {
        Expr::Pointer(p) => doc.pointer(p).cloned().unwrap_or(Value::Null),
        Expr::Length(inner) => match eval(inner, doc) {
            Value::String(s) => Value::from(s.chars().count()),
            Value::Array(a) => Value::from(a.len()),
            Value::Object(o) => Value::from(o.len()),
            _ => Value::Null,
        },
        Expr::Path(steps) => {
            let mut current = doc;
            for step in steps {
                let next = match (step, current) {
                    (Step::Key(k), Value::Object(map)) => map.get(k),
                    (Step::Index(i), Value::Array(items)) => {
                        let len = items.len() as i64;
                        let at = if *i < 0 { len + i } else { *i };
                        if (0..len).contains(&at) {
                            items.get(at as usize)
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                match next {
                    Some(value) => current = value,
                    None => return Value::Null,
                }
            }
            current.clone()
        }
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn rest_starts_with(&self, s: &str) -> bool {
        let want: Vec<char> = s.chars().collect();
        self.chars[self.pos..].starts_with(&want)
    }

    fn expr(&mut self) -> Result<Expr, String> {
        if self.rest_starts_with("length(") {
            self.pos += "length(".len();
            let inner = self.expr()?;
            if self.peek() != Some(')') {
                return Err(format!("expected `)` at character {}", self.pos + 1));
            }
            self.pos += 1;
            return Ok(Expr::Length(Box::new(inner)));
        }
        let mut steps = Vec::new();
        match self.peek() {
            None | Some(')') => return Ok(Expr::Path(steps)),
            Some('@') => self.pos += 1,
            Some('[') => steps.push(self.index()?),
            Some(_) => steps.push(self.key()?),
        }
        loop {
            match self.peek() {
                Some('.') => {
                    self.pos += 1;
                    steps.push(self.key()?);
                }
                Some('[') => steps.push(self.index()?),
                _ => return Ok(Expr::Path(steps)),
            }
        }
    }

    fn key(&mut self) -> Result<Step, String> {
        if self.peek() == Some('"') {
            self.pos += 1;
            let mut key = String::new();
            loop {
                match self.peek() {
                    None => return Err("unterminated quoted key".into()),
                    Some('"') => {
                        self.pos += 1;
                        return Ok(Step::Key(key));
                    }
                    Some('\\') => {
                        self.pos += 1;
                        let c = self.peek().ok_or("unterminated quoted key")?;
                        key.push(c);
                        self.pos += 1;
                    }
                    Some(c) => {
                        key.push(c);
                        self.pos += 1;
                    }
                }
            }
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '$')
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(match self.peek() {
                Some(c) => format!("expected a key at character {}, found `{c}`", self.pos + 1),
                None => "expected a key at the end".into(),
            });
        }
        Ok(Step::Key(self.chars[start..self.pos].iter().collect()))
    }

    fn index(&mut self) -> Result<Step, String> {
        self.pos += 1; // '['
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        if self.peek() != Some(']') || digits.is_empty() || digits == "-" {
            return Err(format!(
                "expected `[N]` at character {} (projections like `[*]` are not supported)",
                start
            ));
        }
        self.pos += 1;
        digits
            .parse()
            .map(Step::Index)
            .map_err(|_| format!("index `{digits}` is out of range"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_paths() {
        let doc = json!({"a": {"b": [10, 20, {"c": "x"}]}, "my key": 1, "n-1": true});
        let get = |e: &str| eval(&parse(e).unwrap(), &doc);
        assert_eq!(get("a.b[0]"), json!(10));
        assert_eq!(get("a.b[-1].c"), json!("x"));
        assert_eq!(get("a.b[5]"), Value::Null);
        assert_eq!(get("a.zz.b"), Value::Null);
        assert_eq!(get("\"my key\""), json!(1));
        assert_eq!(get("n-1"), json!(true));
        assert_eq!(get("@"), doc);
        assert_eq!(get(""), doc);
        assert_eq!(get("length(a.b)"), json!(3));
        assert_eq!(get("length(a.b[2].c)"), json!(1));
        assert_eq!(get("length(@)"), json!(3));
        assert_eq!(get("/a/b/1"), json!(20));
        assert_eq!(get("/a/nope"), Value::Null);
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        for bad in ["a.", "a[*]", "a[x]", "a..b", "length(a", "\"open", "a b"] {
            assert!(parse(bad).is_err(), "{bad} must not parse");
        }
    }
}
