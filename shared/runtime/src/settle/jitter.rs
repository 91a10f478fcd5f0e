//! Random waits, so that workers one event turned away (a 429 for many, a busy limit) do not
//! all come back at the same moment: a retry's delay ([`super::decision::decide`]) and a wait at
//! a provider limit.

use std::time::Duration;

use uuid::Uuid;

/// A uniformly random number in [0, 1): the low 53 bits of a v4 UUID (all random; its version
/// and variant bits are higher up).
pub(crate) fn random_fraction() -> f64 {
    const BITS: u64 = (1 << 53) - 1;
    (Uuid::new_v4().as_u128() as u64 & BITS) as f64 / (BITS + 1) as f64
}

/// `base` plus a random part of it.
pub(crate) fn jittered(base: Duration) -> Duration {
    base + base.mul_f64(random_fraction())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_stay_in_range_and_vary() {
        let draws: Vec<f64> = (0..1000).map(|_| random_fraction()).collect();
        assert!(draws.iter().all(|f| (0.0..1.0).contains(f)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((0.4..0.6).contains(&mean), "mean {mean}");
        let base = Duration::from_secs(1);
        assert!((0..100).map(|_| jittered(base)).all(|d| d >= base && d < base * 2));
    }
}
