//! Greedy local search, a model-free baseline: start at a random variant,
//! then always measure an unmeasured variant nearest (fewest differing
//! configuration fields, ties at random) to the best measured so far.
//! When a neighbourhood is used up the next nearest ring follows, so the
//! search restarts by itself farther away.

use super::fields::{Fields, Point, differing};
use super::{Observation, Searcher, Space, pick};
use crate::lab::rng::Lcg;

pub(crate) struct Local {
    coords: Vec<Point>,
    rng: Lcg,
    last_why: Option<String>,
}

impl Local {
    pub(crate) fn new(space: Space<'_>, seed: u64) -> Local {
        let fields = Fields::of(space.configs);
        Local {
            coords: space.configs.iter().map(|c| fields.point(c)).collect(),
            rng: Lcg::new(seed),
            last_why: None,
        }
    }
}

impl Searcher for Local {
    fn next(&mut self, history: &[Observation]) -> Option<usize> {
        let n = self.coords.len();
        let mut measured = vec![false; n];
        for o in history {
            measured[o.variant] = true;
        }
        let open: Vec<usize> = (0..n).filter(|&v| !measured[v]).collect();
        if open.is_empty() {
            return None;
        }
        // The incumbent: the fastest feasible variant so far (the earliest
        // on ties).
        let best = history
            .iter()
            .filter_map(|o| o.speedup.map(|s| (o.variant, s)))
            .fold(None::<(usize, f64)>, |b, (v, s)| match b {
                Some((_, bs)) if bs >= s => b,
                _ => Some((v, s)),
            });
        let Some((inc, _)) = best else {
            self.last_why = Some("local: random start".into());
            return Some(open[pick(&mut self.rng, open.len())]);
        };
        let d = |v: usize| differing(&self.coords[v], &self.coords[inc]);
        let nearest = open.iter().map(|&v| d(v)).min()?;
        let ring: Vec<usize> = open.into_iter().filter(|&v| d(v) == nearest).collect();
        self.last_why = Some(format!(
            "local: {nearest} field(s) from the best #{}",
            history.iter().position(|o| o.variant == inc).unwrap_or(0) + 1
        ));
        Some(ring[pick(&mut self.rng, ring.len())])
    }

    fn why(&self) -> Option<String> {
        self.last_why.clone()
    }
}
