//! SEAL's CKKS operations on the device: the elementwise kernels (`opencl/ckks.cl`) with
//! their host references (`host`, the oracles, one function per kernel of the same name)
//! and launchers (`kernels`: [`kernels::CkksKernels`] per (context, N) and
//! [`kernels::ModuliTable`]); the device data of a parameter set (`context`); the fused
//! passes, NTT passes with an operation's element-wise steps in their loads and stores
//! (`fused`, kernels in `opencl/keyswitch.cl`, `moddown.cl`, `galois.cl`, `inv_fwd.cl`);
//! and SEAL's Evaluator operations as sequences of those kernels and NTTs (`ops`).

pub mod context;
pub mod fused;
pub mod host;
pub mod kernels;
pub mod ops;
