//! The typed values of the store and their text columns: a
//! configuration is its bit string, a size, compiler and status their
//! names, as is a feature back end. The columns hold exactly what earlier builds wrote.

use crate::config::Config;
use crate::lab::characterize::Backend;
use crate::lab::compiler::Family;
use crate::lab::size::Size;
use crate::lab::verify::Status;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use std::str::FromStr;

/// A text column parsed as `T`; a value `T` does not know is an error
/// that names it.
fn parsed<T>(v: ValueRef<'_>) -> FromSqlResult<T>
where
    T: FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    v.as_str()?
        .parse()
        .map_err(|e| FromSqlError::Other(Box::new(e)))
}

macro_rules! named {
    ($t:ty) => {
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl FromSql for $t {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                parsed(v)
            }
        }
    };
}

named!(Size);
named!(Family);
named!(Status);
named!(Backend);

impl ToSql for Config {
    /// The bit string; a configuration beyond the paper's space has none
    /// and is refused rather than stored as its paper part.
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        if !self.is_paper() {
            return Err(rusqlite::Error::ToSqlConversionFailure(
                format!("configuration {self} is beyond the paper's space: the store keeps bit strings only").into(),
            ));
        }
        Ok(self.bits().into())
    }
}

impl FromSql for Config {
    /// Bit strings only: the store never holds the readable form.
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        Config::from_bits(v.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}
