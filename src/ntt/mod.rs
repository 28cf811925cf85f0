//! The negacyclic NTT of SEAL's `util/ntt`: tables (`tables`), the host reference
//! (`host`), and the device transforms (`device`): a naive radix-2 baseline and a staged
//! radix-4, radix-8 or radix-16 NTT that keeps sub-transforms in local memory.

mod device;
pub mod host;
mod tables;

pub use device::{
    check_galois_elt, KeySwitch, ModDown, NttDirection, NttPlan, NttStrategy, StagedLayout,
    StagedVariant, DEVICE_COEFF_COUNT_POWER_MAX, DEVICE_COEFF_COUNT_POWER_MIN,
    NTT_STRATEGY_ENV_VAR, NTT_VARIANT_ENV_VAR, STAGED_COEFF_COUNT_POWER_MIN,
};
pub use tables::{
    create_ntt_tables, reverse_bits, NttTables, COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN,
};
