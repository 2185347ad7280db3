//! scikit-learn's row order, reproduced bit for bit: the reshuffle before
//! every epoch, and each perceptron's seed drawn from `random_state`.
//!
//! # The order (`--shuffle-every-epoch --seed S`)
//! scikit-learn 1.9's SGD keeps an index array, identity at the start, and
//! before every epoch permutes it in place with the same seed s: for
//! i = 0..n-2, j = i + r % (n - i), swap(i, j), where r comes from a 32-bit
//! xorshift (13, 17, 5) started at s (1 if s = 0) and taken modulo 2^31
//! (`sklearn/utils/_seq_dataset.pyx.tp`, `_random.pxd`). So epoch e visits
//! the rows in that permutation applied e times.
//!
//! The seed s of a perceptron comes from `random_state` through NumPy's
//! legacy `RandomState`: a binary model draws `randint(1, 2^31-1)` (the
//! dataset's seed, unused here) and then s = `randint(2^31-1)`. A
//! one-vs-rest model first draws one seed per class, `randint(2^31-1,
//! size=K)`, and class h's perceptron then draws as a binary one from
//! `RandomState(seed_h)`. [`Mt19937`] is that generator (Matsumoto and
//! Nishimura's MT19937 with NumPy's seeding and its masked rejection for
//! bounded integers).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// NumPy's `np.iinfo(np.int32).max`, the bound of scikit-learn's seeds.
pub(super) const MAX_INT: u32 = i32::MAX as u32;

/// How the rows are reshuffled before every epoch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EveryEpoch {
    /// scikit-learn's `random_state=S` (an int): the seeds follow from it.
    RandomState(u32),
    /// The xorshift seed of each perceptron (one per one-vs-rest class), as
    /// a caller drew them from its own generator.
    Seeds(Vec<u32>),
}

impl EveryEpoch {
    /// The xorshift seed of each of `heads` perceptrons (see the module
    /// documentation).
    pub fn seeds(&self, heads: usize) -> Result<Vec<u32>> {
        match self {
            EveryEpoch::RandomState(s) => Ok(seeds_from_random_state(*s, heads)),
            EveryEpoch::Seeds(seeds) if seeds.len() == heads => Ok(seeds.clone()),
            EveryEpoch::Seeds(seeds) => Err(Error::Usage(format!(
                "the every-epoch shuffle has {} seed(s) for {heads} perceptron(s)",
                seeds.len()
            ))),
        }
    }
}

/// The seeds scikit-learn's `Perceptron(random_state=state)` shuffles its
/// `heads` perceptrons with (1 for a binary model).
pub fn seeds_from_random_state(state: u32, heads: usize) -> Vec<u32> {
    let of_binary = |state: u32| {
        let mut rng = Mt19937::new(state);
        rng.below(1, MAX_INT); // the dataset's own seed
        rng.below(0, MAX_INT)
    };
    if heads == 1 {
        return vec![of_binary(state)];
    }
    let mut rng = Mt19937::new(state);
    let per_class: Vec<u32> = (0..heads).map(|_| rng.below(0, MAX_INT)).collect();
    per_class.into_iter().map(of_binary).collect()
}

/// MT19937 as NumPy's legacy `RandomState(seed)` runs it.
pub struct Mt19937 {
    state: [u32; 624],
    next: usize,
}

impl Mt19937 {
    /// `RandomState(seed)` for an int seed (Knuth's initialisation).
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..624 {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, next: 624 }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.next >= 624 {
            for i in 0..624 {
                let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % 624] & 0x7fff_ffff);
                let mut v = self.state[(i + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[i] = v;
            }
            self.next = 0;
        }
        let mut y = self.state[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `randint(low, high)` (high > low + 1): draws masked to the smallest
    /// 2^k - 1 covering high - low - 1, rejected above it.
    pub fn below(&mut self, low: u32, high: u32) -> u32 {
        let range = high - low - 1;
        let mask = u32::MAX >> range.leading_zeros();
        loop {
            let v = self.next_u32() & mask;
            if v <= range {
                return low + v;
            }
        }
    }
}

/// scikit-learn's `our_rand_r`: a 32-bit xorshift, taken modulo 2^31.
#[inline]
pub fn xorshift(seed: &mut u32) -> u32 {
    if *seed == 0 {
        *seed = 1;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    *seed % (MAX_INT + 1)
}

/// One epoch's reshuffle of `order` in place (scikit-learn's
/// `SequentialDataset.shuffle(seed)`).
pub fn reshuffle(order: &mut [usize], seed: u32) {
    let n = order.len();
    let mut s = seed;
    for i in 0..n.saturating_sub(1) {
        let j = i + xorshift(&mut s) as usize % (n - i);
        order.swap(i, j);
    }
}
