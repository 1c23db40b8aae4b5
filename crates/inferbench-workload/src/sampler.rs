//! Which payload each request sends (AIPerf's `--dataset-sampling-strategy`).

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::synthetic::{PURPOSE_SAMPLING, rng_for};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SamplingStrategy {
    /// 0, 1, 2, ..., wrapping around.
    Sequential,
    /// Uniform, with replacement.
    Random,
    /// Without replacement; a new permutation each time all were used. AIPerf's default for
    /// synthetic data.
    #[default]
    Shuffle,
}

impl SamplingStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            SamplingStrategy::Sequential => "sequential",
            SamplingStrategy::Random => "random",
            SamplingStrategy::Shuffle => "shuffle",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sequential" => Some(SamplingStrategy::Sequential),
            "random" => Some(SamplingStrategy::Random),
            "shuffle" => Some(SamplingStrategy::Shuffle),
            _ => None,
        }
    }
}

/// An endless stream of payload indices in `0..len`, from the `dataset.sampling` generator.
#[derive(Clone, Debug)]
pub struct Sampler {
    strategy: SamplingStrategy,
    len: usize,
    rng: ChaCha8Rng,
    /// Current permutation (shuffle only) and the position in it (or the sequential cursor).
    order: Vec<usize>,
    pos: usize,
}

impl Sampler {
    pub fn new(strategy: SamplingStrategy, len: usize, seed: u64) -> Result<Self, WorkloadError> {
        if len == 0 {
            return Err(WorkloadError::EmptyDataset);
        }
        Ok(Sampler {
            strategy,
            len,
            rng: rng_for(seed, PURPOSE_SAMPLING),
            order: Vec::new(),
            pos: 0,
        })
    }

    pub fn strategy(&self) -> SamplingStrategy {
        self.strategy
    }

    /// The next payload index.
    #[allow(
        clippy::should_implement_trait,
        reason = "endless: an Iterator's None would never come"
    )]
    pub fn next(&mut self) -> usize {
        match self.strategy {
            SamplingStrategy::Sequential => {
                let i = self.pos;
                self.pos = (self.pos + 1) % self.len;
                i
            }
            SamplingStrategy::Random => self.rng.random_range(0..self.len),
            SamplingStrategy::Shuffle => {
                if self.pos == self.order.len() {
                    self.order = (0..self.len).collect();
                    self.order.shuffle(&mut self.rng);
                    self.pos = 0;
                }
                let i = self.order[self.pos];
                self.pos += 1;
                i
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps() {
        let mut s = Sampler::new(SamplingStrategy::Sequential, 3, 1).unwrap();
        let got: Vec<usize> = (0..7).map(|_| s.next()).collect();
        assert_eq!(got, vec![0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn shuffle_uses_each_index_once_per_round() {
        let mut s = Sampler::new(SamplingStrategy::default(), 10, 5).unwrap();
        let mut rounds = Vec::new();
        for _ in 0..4 {
            let mut r: Vec<usize> = (0..10).map(|_| s.next()).collect();
            rounds.push(r.clone());
            r.sort_unstable();
            assert_eq!(r, (0..10).collect::<Vec<_>>());
        }
        // Reshuffled between rounds (4 equal permutations of 10 would be a 1 in 10!^3 event).
        assert!(rounds.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn random_covers_the_range_and_is_seeded() {
        let mut a = Sampler::new(SamplingStrategy::Random, 4, 9).unwrap();
        let mut b = Sampler::new(SamplingStrategy::Random, 4, 9).unwrap();
        let xs: Vec<usize> = (0..200).map(|_| a.next()).collect();
        let ys: Vec<usize> = (0..200).map(|_| b.next()).collect();
        assert_eq!(xs, ys);
        for i in 0..4 {
            assert!(xs.contains(&i));
        }
        assert!(xs.iter().all(|&i| i < 4));
    }

    #[test]
    fn empty_dataset_is_an_error_and_names_parse() {
        assert!(Sampler::new(SamplingStrategy::Shuffle, 0, 1).is_err());
        for s in [
            SamplingStrategy::Sequential,
            SamplingStrategy::Random,
            SamplingStrategy::Shuffle,
        ] {
            assert_eq!(SamplingStrategy::parse(s.as_str()), Some(s));
        }
        assert_eq!(SamplingStrategy::parse("nope"), None);
    }
}
