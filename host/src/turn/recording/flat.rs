//! One recording line read in a single pass. The derived reader of [`Record`] (internally
//! tagged, with a flattened [`Data`]) first buffers the whole line in serde's generic
//! content, copying every string once more; this reads each field straight into its type.
//! It gives a record only for a line the derived reader reads the same way; anything else
//! (an unknown `t`, a field of another type, both `text` and `b64`, a repeated key, a
//! missing field) is left to the derived reader, so its results and error messages stand.

use super::{Data, Record};
use crate::results::StopReason;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;

/// Reads one record (a line of a recording after its header).
pub(super) fn read_record(raw: &[u8]) -> Result<Record, serde_json::Error> {
    match serde_json::from_slice::<Flat<'_>>(raw)
        .ok()
        .and_then(Flat::record)
    {
        Some(record) => Ok(record),
        None => serde_json::from_slice::<Record>(raw),
    }
}

/// A field as the derived reader's non-`Option` fields take it: absent, or a value of its
/// type (`null` is not one).
enum Slot<T> {
    Absent,
    Given(T),
}

// Not derived: a derived Default would ask `T: Default`, which `StopReason` is not.
#[allow(clippy::derivable_impls)]
impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot::Absent
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Slot::Given)
    }
}

impl<T> Slot<T> {
    fn given(self) -> Option<T> {
        match self {
            Slot::Given(value) => Some(value),
            Slot::Absent => None,
        }
    }
}

/// Every field any record has, side by side.
#[derive(Deserialize)]
struct Flat<'a> {
    #[serde(borrow)]
    t: Cow<'a, str>,
    #[serde(default)]
    us: Slot<u64>,
    #[serde(default)]
    text: Slot<String>,
    #[serde(default)]
    b64: Slot<String>,
    #[serde(default)]
    eof: Slot<bool>,
    #[serde(default)]
    turn: Slot<u32>,
    #[serde(default)]
    reason: Slot<StopReason>,
    #[serde(default)]
    tools: Slot<Option<u32>>,
    #[serde(default)]
    code: Slot<Option<i32>>,
    #[serde(default)]
    signal: Slot<Option<i32>>,
    #[serde(default)]
    turn_limit: Slot<bool>,
}

impl Flat<'_> {
    /// The record, when the fields are exactly those of the record `t` names.
    fn record(self) -> Option<Record> {
        let us = self.us.given()?;
        let data = |text: Slot<String>, b64: Slot<String>| match (text, b64) {
            (Slot::Given(text), Slot::Absent) => Some(Data::Text(text)),
            (Slot::Absent, Slot::Given(b64)) => Some(Data::B64(b64)),
            _ => None,
        };
        Some(match &*self.t {
            "out" => Record::Out {
                us,
                data: data(self.text, self.b64)?,
                eof: self.eof.given().unwrap_or(false),
            },
            "err" => Record::Err {
                us,
                data: data(self.text, self.b64)?,
            },
            "call" => Record::Call {
                us,
                turn: self.turn.given()?,
                reason: self.reason.given(),
                tools: self.tools.given().flatten(),
            },
            "stop" => Record::Stop {
                us,
                reason: self.reason.given()?,
            },
            "exit" => Record::Exit {
                us,
                code: self.code.given().flatten(),
                signal: self.signal.given().flatten(),
                turn_limit: self.turn_limit.given().unwrap_or(false),
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line gives what the derived reader gives, record or error message.
    #[test]
    fn reads_as_the_derived_reader_does() {
        let lines = [
            r#"{"t":"out","us":5,"text":"{\"a\":1}"}"#,
            r#"{"t":"out","us":5,"b64":"AAE=","eof":true}"#,
            r#"{"t":"err","us":7,"text":"warn\n"}"#,
            r#"{"t":"call","us":9,"turn":2}"#,
            r#"{"t":"call","us":9,"turn":2,"reason":"max_tool_calls","tools":3}"#,
            r#"{"t":"call","us":9,"turn":2,"reason":null,"tools":null}"#,
            r#"{"t":"stop","us":11,"reason":"max_turns"}"#,
            r#"{"t":"exit","us":12,"code":0}"#,
            r#"{"t":"exit","us":12,"code":null,"signal":9,"turn_limit":true}"#,
            r#"{"t":"exit","us":12}"#,
            // Fields of other records are ignored, whatever their type.
            r#"{"t":"out","us":5,"text":"x","turn":"not a number"}"#,
            r#"{"t":"call","us":9,"turn":2,"extra":[1,2]}"#,
            // What the derived reader refuses (or reads its own way).
            r#"{"t":"out","us":5}"#,
            r#"{"t":"out","us":5,"text":"x","b64":"AAE="}"#,
            r#"{"t":"out","us":null,"text":"x"}"#,
            r#"{"t":"out","us":5,"text":"x","eof":null}"#,
            r#"{"t":"out","us":5,"us":6,"text":"x"}"#,
            r#"{"t":"call","us":9}"#,
            r#"{"t":"nope","us":1}"#,
            r#"{"us":1,"text":"x"}"#,
            r#"{"t":"exit","us":-1}"#,
            r#"[1]"#,
        ];
        for line in lines {
            let fast = read_record(line.as_bytes()).map_err(|e| e.to_string());
            let derived =
                serde_json::from_slice::<Record>(line.as_bytes()).map_err(|e| e.to_string());
            assert_eq!(fast, derived, "{line}");
        }
        // The fast path itself reads the common records.
        assert!(
            serde_json::from_slice::<Flat<'_>>(lines[0].as_bytes())
                .ok()
                .and_then(Flat::record)
                .is_some()
        );
    }
}
