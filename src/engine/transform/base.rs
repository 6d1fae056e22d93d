//! Where a configuration's schedule starts: the tiling hyperplanes
//! (plain, with time bands, or inside the outermost loop), computed when
//! asked or read from the space enumeration's cache.

use super::{hyperplanes, outer_hyperplanes};
use crate::config::{Config, Reductions};
use crate::engine::model::{EngineError, Model};
use crate::isl::Schedule;

/// Which hyperplanes a configuration's schedule starts from: the
/// expensive step, shared by the configurations of one fusion (and the
/// same reductions choice) in the space's enumeration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    /// [`hyperplanes`] without time bands.
    Plain,
    /// [`hyperplanes`] with time bands (`tt=diamond`).
    TimeBands,
    /// [`outer_hyperplanes`] (`outer=1`).
    Outer,
}

impl Base {
    /// The slot of this base in a cache of the three.
    pub(crate) fn slot(self) -> usize {
        self as usize
    }

    /// This base's hyperplanes for `config`'s fusion and reductions.
    pub(crate) fn compute<'c>(
        self,
        model: &Model<'c>,
        scop_index: usize,
        config: &Config,
    ) -> Result<Schedule<'c>, EngineError> {
        let scheduled = config.reduce == Reductions::Scheduled;
        match self {
            Base::Plain => hyperplanes(model, scop_index, config.fusion, false, scheduled),
            Base::TimeBands => hyperplanes(model, scop_index, config.fusion, true, scheduled),
            Base::Outer => outer_hyperplanes(model, scop_index, config.fusion, scheduled),
        }
    }
}

/// Where [`schedule_on`] gets its hyperplanes: computed when asked
/// ([`schedule`]) or from the space enumeration's cache.
pub(crate) trait Bases<'c> {
    fn get(&mut self, base: Base) -> Result<&Schedule<'c>, EngineError>;
}

/// Hyperplanes computed when asked, for one configuration.
pub(super) struct Computed<'a, 'c> {
    pub(super) model: &'a Model<'c>,
    pub(super) scop_index: usize,
    pub(super) config: &'a Config,
    pub(super) held: Option<Schedule<'c>>,
}

impl<'c> Bases<'c> for Computed<'_, 'c> {
    fn get(&mut self, base: Base) -> Result<&Schedule<'c>, EngineError> {
        let s = base.compute(self.model, self.scop_index, self.config)?;
        Ok(self.held.insert(s))
    }
}
