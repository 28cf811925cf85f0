//! CKKS on the device. For now the elementwise kernels that SEAL's Evaluator operations
//! are composed of: their host references (`host`, the oracles, one function per kernel
//! of the same name) and their launchers (`kernels`: [`kernels::CkksKernels`] per
//! (context, N) and [`kernels::ModuliTable`]). The kernels are in `opencl/ckks.cl`.

pub mod host;
pub mod kernels;
