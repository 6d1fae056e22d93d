//! The copies of privatized scalars and arrays a loop run in parallel
//! gives each iteration (`priv=1`, `priv=2`): which it needs, and what an
//! array's copy needs to be declared (its rows, the iteration that works
//! on the array itself).

use super::Lowered;
use crate::isl::{self, AstExpr, IslError};

/// A privatized scalar or array that a loop run in parallel gives each
/// iteration a copy of (`Model::private_in`).
#[derive(Debug, Clone)]
pub(super) struct Copy {
    /// The C name the copy shadows.
    pub(super) name: String,
    /// An array's copy (`priv=2`); `None`: a scalar's.
    pub(super) array: Option<ArrayCopy>,
}

/// An iteration's copy of an array: as many rows (first subscripts, from
/// 0) as the greatest first subscript accessed under the loop, `top`,
/// plus one, of the array's own rows. When the loop holds the array's
/// last writes, `last` is the loop's value in their iteration, which
/// works on the array itself: no other iteration touches the array, so
/// it is left as the original leaves it.
#[derive(Debug, Clone)]
pub(super) struct ArrayCopy {
    pub(super) top: AstExpr,
    pub(super) last: Option<AstExpr>,
}

impl<'c> Lowered<'_, 'c> {
    /// What loop `k` copies per iteration of the privatized model `p`'s
    /// scalars and arrays, when it can run in parallel with them private
    /// (`None`: it cannot).
    pub(super) fn copies(
        &self,
        p: &crate::engine::model::Private<'c>,
        k: usize,
    ) -> Result<Option<Vec<Copy>>, IslError> {
        let Some(inside) = crate::engine::model::private_in(p, &self.schedules[k])? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for c in inside {
            let array = if c.rank == 0 {
                None
            } else {
                match self.array_copy(k, &c)? {
                    Some(a) => Some(a),
                    None => return Ok(None),
                }
            };
            out.push(Copy {
                name: c.name,
                array,
            });
        }
        Ok(Some(out))
    }

    /// What an iteration's copy of a privatized array needs under loop
    /// `k` ([`ArrayCopy`]); `None` when its subscripts can be negative.
    fn array_copy(
        &self,
        k: usize,
        c: &crate::engine::model::InLoop<'c>,
    ) -> Result<Option<ArrayCopy>, IslError> {
        let m = self.model;
        let schedule = &self.schedules[k];
        let under = schedule.domain()?;
        let dims: Vec<String> = (0..c.rank).map(|d| format!("i{d}")).collect();
        let array = isl::UnionSet::parse(
            m.ctx,
            &format!("{{ {}[{}] }}", isl::mangle(&c.name), dims.join(", ")),
        )?;
        let elements = m
            .reads
            .union(&m.writes)?
            .intersect_domain(&under)?
            .intersect_range(&array)?
            .range()?;
        // The bounds hold where the loop touches the array; elsewhere
        // their value is some integer, and a copy of no use (the pointer
        // goes to the array itself where it would not fit).
        if elements.is_empty()? {
            return Ok(None);
        }
        let elements = elements.to_set()?;
        let below = elements.boxes_like(&[vec![(None, Some(-1))]])?;
        if !elements.intersect(&below)?.is_empty()? {
            return Ok(None);
        }
        let Some(top) = isl::max_of_dim(&elements, 0)? else {
            return Ok(None);
        };
        let last = match &c.last {
            None => None,
            Some(last) => {
                // Where the last writes are elsewhere, the iteration this
                // names may work on the array too: no other touches it.
                let at = last.apply(schedule)?.to_set()?;
                match isl::max_of_dim(&at, at.dims()? - 1)? {
                    Some(v) => Some(v),
                    None => return Ok(None),
                }
            }
        };
        Ok(Some(ArrayCopy { top, last }))
    }
}
