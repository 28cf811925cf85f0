//! The negacyclic NTT of SEAL's `util/ntt`: tables (`tables`), the host reference
//! (`host`), the staged transform's knobs and layout (`variant`), and the device plan
//! (`plan`): a naive radix-2 baseline and a staged radix-4, radix-8 or radix-16 NTT that
//! keeps sub-transforms in local memory, whose passes (`pass`) callers may also build from
//! sources of their own on the plan's tables.

pub mod host;
mod pass;
mod plan;
mod tables;
mod variant;

/// The inverse's strided pass alone, for a caller's own block pass before it
/// (`crate::integer::multiply`).
pub(crate) use pass::NTT_INV_STRIDED;
pub use pass::{check_buffers, to_u32, Pass};
pub use plan::{
    staged_only, NttDirection, NttPlan, DEVICE_COEFF_COUNT_POWER_MAX, DEVICE_COEFF_COUNT_POWER_MIN,
    STAGED_COEFF_COUNT_POWER_MIN,
};
pub use tables::{
    create_ntt_tables, reverse_bits, NttTables, COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN,
};
pub use variant::{NttStrategy, StagedLayout, StagedVariant};
