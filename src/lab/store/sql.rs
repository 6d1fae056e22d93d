//! The typed values of the store and their text columns: a
//! configuration is its bit string (its readable form beyond the paper's
//! space, schema 3 on), a size, compiler and status their names, as is a
//! feature back end. The columns hold exactly what earlier builds wrote.

use crate::config::{Config, ConfigError};
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
    /// A configuration of the paper's space as its bit string (what every
    /// store held before schema 3, so those rows are unchanged), one
    /// beyond it in its readable form (`fuse=no,tile=64x256x8,...,rb=4x8`):
    /// the two never collide, as a bit string has no `=`. A new key of the
    /// configuration is stored by its readable form alone, with no change
    /// here.
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(stored_text(self).into())
    }
}

impl FromSql for Config {
    /// See [`stored_config`].
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        stored_config(v.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

/// What the store writes for a configuration.
pub(super) fn stored_text(c: &Config) -> String {
    c.text()
}

/// A stored configuration: a bit string, or the readable form of one
/// beyond the paper's space. A readable form that names a configuration
/// of the paper's space is refused: this build never writes one (it
/// would be a second spelling of a bit string's row), so it is not read
/// as if it had.
pub(super) fn stored_config(text: &str) -> Result<Config, ConfigError> {
    if !text.contains('=') {
        return Config::from_bits(text);
    }
    let c: Config = text.parse()?;
    if c.is_paper() {
        return Err(ConfigError {
            text: text.to_string(),
            reason: format!(
                "a configuration of the paper's space is stored as its bit string ({}), never in readable form",
                c.bits()
            ),
        });
    }
    Ok(c)
}
