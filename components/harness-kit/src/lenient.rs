//! Typed, borrowed reading of stream lines, as lenient as reading a `serde_json::Value`.
//!
//! A reducer declares the fields it reads as a struct that derives `Deserialize` and
//! implements [`Object`]; everything else in the line is skipped without being built, and
//! strings are borrowed from the line unless they hold escapes. Building a whole `Value`
//! tree for each line (a map per object, a string per key) was most of a reducer's work:
//! reading typed views made the Claude Code reducer 2.8× faster natively and 2.3× faster
//! as a component (`cargo bench --bench replay`).
//!
//! Every field is *lenient*: a value of another JSON type than the one expected reads as
//! absent, exactly as `Value::as_str`, `as_u64`, `as_f64`, `as_bool` and `as_object`
//! would, so one odd field never costs the rest of the line. Mark each field
//!
//! ```ignore
//! #[derive(serde::Deserialize, Default)]
//! #[serde(default)]
//! struct Line<'a> {
//!     #[serde(rename = "type", borrow, deserialize_with = "lenient::field")]
//!     kind: Option<Cow<'a, str>>,
//!     #[serde(borrow, deserialize_with = "lenient::list")]
//!     tools: Vec<Cow<'a, str>>,
//! }
//! impl<'de: 'a, 'a> lenient::Object<'de> for Line<'a> {}
//! ```
//!
//! and read a line with [`parse_line`](crate::parse_line).

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A type read leniently: `Ok(None)` for a JSON value of another type; `Err` only for
/// broken JSON (or, for an [`Object`], a key given twice).
pub trait Lenient<'de>: Sized {
    /// Reads `Some(value)` if the JSON value has the expected type, else skips it.
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error>;
}

/// A struct read from a JSON object (and only from one: an array or scalar reads as
/// absent). Implement it (an empty impl) for each struct of a line's schema; its fields
/// should be lenient in turn.
pub trait Object<'de>: Deserialize<'de> {}

/// A boxed view: read the same, moved by pointer. A view of many fields is large (Claude
/// Code's line is about 800 bytes on wasm32), and a component moves it with a
/// `memory.copy`, a call out of the guest, each time it changes hands; boxed, it is copied
/// once.
impl<'de, T: Object<'de>> Object<'de> for Box<T> {}

/// A whole JSON object as a `serde_json::Map` (the view of reducers that read `Value`s).
impl Object<'_> for serde_json::Map<String, serde_json::Value> {}

/// `deserialize_with` for an `Option<T>` field: absent unless the value has T's type.
/// Pair it with `#[serde(default)]`.
pub fn field<'de, D: Deserializer<'de>, T: Lenient<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::lenient(d)
}

/// `deserialize_with` for a `Vec<T>` field: an array's elements that have T's type, the
/// others skipped; anything but an array reads as empty. Pair it with `#[serde(default)]`.
pub fn list<'de, D: Deserializer<'de>, T: Lenient<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(d.deserialize_any(ListVisitor(PhantomData))?
        .unwrap_or_default())
}

/// A string or an array, the two shapes a message's content takes in the model APIs (plain
/// text, or content blocks); an array keeps the elements that have T's type.
#[derive(Debug, Clone, PartialEq)]
pub enum TextOrList<'a, T> {
    /// The content as one string.
    Text(Cow<'a, str>),
    /// The content as an array.
    List(Vec<T>),
}

impl<'de: 'a, 'a> Lenient<'de> for Cow<'a, str> {
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::Str(s) => Some(s),
            _ => None,
        })
    }
}

impl<'de> Lenient<'de> for u64 {
    /// Like `Value::as_u64`: a non-negative integer; a float or negative number is absent.
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::U64(n) => Some(n),
            Scalar::I64(n) => u64::try_from(n).ok(),
            _ => None,
        })
    }
}

impl<'de> Lenient<'de> for f64 {
    /// Like `Value::as_f64`: any number.
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::U64(n) => Some(n as f64),
            Scalar::I64(n) => Some(n as f64),
            Scalar::F64(n) => Some(n),
            _ => None,
        })
    }
}

impl<'de> Lenient<'de> for bool {
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::Bool(b) => Some(b),
            _ => None,
        })
    }
}

impl<'de, T: Object<'de>> Lenient<'de> for T {
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData))
    }
}

/// A JSON scalar, or `Other` for null, an object or an array (skipped).
enum Scalar<'de> {
    Str(Cow<'de, str>),
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Other,
}

struct ScalarVisitor;

/// Skips a map's entries without building them.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Skips a sequence's elements without building them.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::I64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| Scalar::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|()| Scalar::Other)
    }
}

/// The `visit_*` methods of a visitor whose `Value` is an `Option`, for the scalars it
/// does not want: each reads as `None`.
macro_rules! absent_scalars {
    () => {
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

/// The elements of a sequence that have T's type.
fn collect_seq<'de, A: SeqAccess<'de>, T: Lenient<'de>>(mut seq: A) -> Result<Vec<T>, A::Error> {
    let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
    while let Some(item) = seq.next_element_seed(ElementSeed(PhantomData))? {
        items.extend(item);
    }
    Ok(items)
}

/// Reads one array element leniently.
struct ElementSeed<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> DeserializeSeed<'de> for ElementSeed<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        T::lenient(d)
    }
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        collect_seq(seq).map(Some)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    absent_scalars!();
}

impl<'de: 'a, 'a, T: Lenient<'de>> Lenient<'de> for TextOrList<'a, T> {
    fn lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(TextOrListVisitor(PhantomData))
    }
}

struct TextOrListVisitor<'a, T>(PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: Lenient<'de>> Visitor<'de> for TextOrListVisitor<'a, T> {
    type Value = Option<TextOrList<'a, T>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(TextOrList::Text(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(TextOrList::Text(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(TextOrList::Text(Cow::Owned(v))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        collect_seq(seq).map(|items| Some(TextOrList::List(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| None)
    }
    absent_scalars!();
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Object<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        drain_seq(seq).map(|()| None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    absent_scalars!();
}

#[cfg(test)]
mod tests;
