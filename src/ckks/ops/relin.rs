//! SEAL's `relinearize_internal` (Evaluator::relinearize), which key-switches the
//! ciphertext's polynomials beyond the second, last first ([`super::keyswitch`]).

use super::LevelOps;
use crate::ckks::context::KswitchKey;
use crate::cl::Region;
use crate::error::{Error, Result};

impl LevelOps<'_> {
    /// SEAL's relinearize_internal: `ct` holds `size` polynomials; for each key, last
    /// polynomial first, key-switches that polynomial into the first two. `keys[s]`
    /// switches polynomial `size - 1 - s`. On exit the first `size - keys.len()`
    /// polynomials hold the result (the caller truncates).
    pub fn relinearize(&self, ct: &Region, size: usize, keys: &[&KswitchKey]) -> Result<()> {
        if keys.len() + 2 > size {
            return Err(Error::invalid(format!(
                "relinearize {size} polynomials with {} keys",
                keys.len()
            )));
        }
        for (step, key) in keys.iter().enumerate() {
            let target = size - 1 - step;
            self.switch_key(ct, ct, target * self.poly_words(), key)?;
        }
        Ok(())
    }
}
