//! Kernel signatures declared once: each kernel's parameters, names and types in the order
//! its OpenCL declaration lists them ([`KernelSig`], written with [`kernel_sigs!`]). Kernels
//! are built and their arguments set through the signature, by name, and
//! [`check_source`] compares every signature with the `__kernel` declarations of a .cl
//! source, so that neither side can change alone (each source's unit test runs it).
//!
//! A buffer parameter ([`ArgType::Buf`], set from a [`super::Region`]) is two OpenCL
//! parameters, the pointer and the region's first word, and the kernel's body moves the
//! pointer there before anything else:
//!
//! ```c
//! __kernel void k(__global u64 *restrict values, ulong values_at, uint count)
//! {
//!     values += values_at;
//!     ...
//! }
//! ```
//!
//! [`check_source`] checks both halves.

use ocl::{Buffer, Kernel, Program};

use super::{apply_args, BoundArg, KernelArg};
use crate::error::{Error, Result};

/// The type of one kernel parameter: `__global [const] u64 *name, ulong name_at` (a region
/// of words: two OpenCL parameters), `uint` or `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    Buf,
    U32,
    U64,
}

impl ArgType {
    /// The OpenCL parameters one parameter of this type takes.
    pub fn slots(self) -> u32 {
        match self {
            ArgType::Buf => 2,
            ArgType::U32 | ArgType::U64 => 1,
        }
    }
}

impl KernelArg<'_> {
    /// The parameter type this argument sets.
    pub fn arg_type(&self) -> ArgType {
        match self {
            KernelArg::Buf(_) => ArgType::Buf,
            KernelArg::U32(_) => ArgType::U32,
            KernelArg::U64(_) => ArgType::U64,
        }
    }
}

/// One kernel's name and parameters in declaration order.
#[derive(Debug)]
pub struct KernelSig {
    pub name: &'static str,
    pub params: &'static [(&'static str, ArgType)],
}

/// Declares [`KernelSig`] constants: `NAME = kernel_name(param: Buf, other: U32, ...);`,
/// the parameters as the kernel's OpenCL declaration names and orders them.
macro_rules! kernel_sigs {
    ($($(#[$doc:meta])* $vis:vis $konst:ident = $kernel:ident($($param:ident: $ty:ident),* $(,)?);)*) => {
        $(
            $(#[$doc])*
            $vis const $konst: $crate::cl::KernelSig = $crate::cl::KernelSig {
                name: stringify!($kernel),
                params: &[$((stringify!($param), $crate::cl::ArgType::$ty)),*],
            };
        )*
    };
}
pub(crate) use kernel_sigs;

impl KernelSig {
    /// The kernel from `program` with the arguments `fixed` (name, value) set, and every
    /// other parameter a placeholder of its type that each launch sets ([`KernelSig::set`]).
    ///
    /// Errors: a name the signature lacks or a value of another type; the build fails.
    pub fn build(&self, program: &Program, fixed: &[(&str, KernelArg)]) -> Result<Kernel> {
        let mut builder = Kernel::builder();
        builder.program(program).name(self.name);
        for &(param, ty) in self.params {
            match fixed.iter().find(|(name, _)| *name == param) {
                Some((_, arg)) if arg.arg_type() != ty => return Err(self.mismatch(param)),
                Some((_, KernelArg::Buf(region))) => {
                    builder.arg(region.buffer()).arg(region.offset() as u64)
                }
                Some((_, KernelArg::U32(v))) => builder.arg(*v),
                Some((_, KernelArg::U64(v))) => builder.arg(*v),
                None => match ty {
                    ArgType::Buf => builder.arg(None::<&Buffer<u64>>).arg(0u64),
                    ArgType::U32 => builder.arg(0u32),
                    ArgType::U64 => builder.arg(0u64),
                },
            };
        }
        if let Some((name, _)) = fixed
            .iter()
            .find(|(name, _)| !self.params.iter().any(|(p, _)| p == name))
        {
            return Err(self.mismatch(name));
        }
        Ok(builder.build()?)
    }

    /// `args` bound to their OpenCL parameter indices: every parameter but those named in
    /// `preset` (set when the kernel was built), in declaration order, each named as
    /// declared and of its type.
    ///
    /// Errors (a logic error): an argument missing, extra, out of order or of another type.
    pub fn bind<'a, 'b: 'a>(
        &self,
        args: impl IntoIterator<Item = &'a (&'a str, KernelArg<'b>)>,
        preset: &[&str],
    ) -> Result<Vec<(u32, BoundArg)>> {
        let mut given = args.into_iter();
        let mut bound = Vec::with_capacity(self.params.len());
        let mut index = 0;
        for &(param, ty) in self.params {
            if !preset.contains(&param) {
                match given.next() {
                    Some(&(name, arg)) if name == param && arg.arg_type() == ty => {
                        bound.push((index, arg.bound()))
                    }
                    _ => return Err(self.mismatch(param)),
                }
            }
            index += ty.slots();
        }
        match given.next() {
            Some((name, _)) => Err(self.mismatch(name)),
            None => Ok(bound),
        }
    }

    /// Sets `args` on `kernel` as [`KernelSig::bind`] binds them (its errors, nothing set).
    ///
    /// # Safety
    /// `kernel` was built from this signature ([`KernelSig::build`]), so that the types
    /// checked here are the kernel's; the rest of [`apply_args`]'s contract holds (every
    /// argument set anew before each enqueue, under the caller's lock).
    pub unsafe fn set<'a, 'b: 'a>(
        &self,
        kernel: &Kernel,
        args: impl IntoIterator<Item = &'a (&'a str, KernelArg<'b>)>,
        preset: &[&str],
    ) -> Result<()> {
        let bound = self.bind(args, preset)?;
        // SAFETY: bound from this signature, the kernel's (this function's contract); the
        // rest is the caller's contract.
        unsafe { apply_args(kernel, &bound) }
    }

    fn mismatch(&self, param: &str) -> Error {
        Error::Logic(format!(
            "{}: arguments do not match the kernel's signature at `{param}`",
            self.name
        ))
    }
}

/// A kernel as its OpenCL source declares it: its name and its parameters (name, type;
/// None for a type a signature cannot name), in order.
pub type Declared = (String, Vec<(String, Option<ArgType>)>);

/// One `__kernel` of a source: its declaration and its text up to the next kernel.
struct KernelText {
    declared: Declared,
    text: String,
}

/// The `__kernel` declarations of an OpenCL source (comments removed).
fn kernel_texts(source: &str) -> Vec<KernelText> {
    let code: String = source
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut kernels = Vec::new();
    for decl in code.split("__kernel").skip(1) {
        let Some(after_void) = decl.split_once("void").map(|(_, rest)| rest) else {
            continue;
        };
        let Some((name, rest)) = after_void.split_once('(') else {
            continue;
        };
        let Some((params, _)) = rest.split_once(')') else {
            continue;
        };
        let params: Vec<(String, Option<ArgType>, bool)> = params
            .split(',')
            .map(|p| {
                let words: Vec<&str> = p.split_whitespace().collect();
                let name = words.last().unwrap_or(&"").trim_start_matches('*');
                let ty = if p.contains('*') {
                    Some(ArgType::Buf)
                } else if words.contains(&"uint") {
                    Some(ArgType::U32)
                } else if words.contains(&"u64") || words.contains(&"ulong") {
                    Some(ArgType::U64)
                } else {
                    None
                };
                (name.to_string(), ty, words.contains(&"ulong"))
            })
            .collect();
        let mut folded = Vec::new();
        let mut i = 0;
        while i < params.len() {
            let (name, ty, _) = &params[i];
            if *ty == Some(ArgType::Buf) {
                // A pointer without its offset parameter is no type a signature names.
                let offset = params.get(i + 1).filter(|(next, _, ulong)| {
                    *ulong && next.strip_suffix("_at") == Some(name.as_str())
                });
                folded.push((name.clone(), offset.is_some().then_some(ArgType::Buf)));
                i += 1 + usize::from(offset.is_some());
            } else {
                folded.push((name.clone(), *ty));
                i += 1;
            }
        }
        kernels.push(KernelText {
            declared: (name.trim().to_string(), folded),
            text: decl.to_string(),
        });
    }
    kernels
}

/// The `__kernel` declarations of an OpenCL source. A parameter's type is a buffer if it
/// is a pointer followed by `ulong <name>_at` (the two halves of a region), else `uint` or
/// `u64`/`ulong`; None for any other type (a pointer without its offset included).
pub fn declared_kernels(source: &str) -> Vec<Declared> {
    kernel_texts(source)
        .into_iter()
        .map(|k| k.declared)
        .collect()
}

/// Whether `sigs` are exactly the kernels `source` declares: the same kernels, each with
/// the same parameter names and types in the same order, and each buffer parameter `name`
/// moved to its region in the kernel's text (`name += name_at;`). The error lists every
/// difference.
pub fn check_source(source: &str, sigs: &[&KernelSig]) -> std::result::Result<(), String> {
    let kernels = kernel_texts(source);
    let mut problems = Vec::new();
    for KernelText {
        declared: (name, params),
        text,
    } in &kernels
    {
        match sigs.iter().find(|s| s.name == name) {
            None => problems.push(format!("{name}: declared in the source, no signature")),
            Some(sig) => {
                let ours: Vec<(String, Option<ArgType>)> = sig
                    .params
                    .iter()
                    .map(|&(p, t)| (p.to_string(), Some(t)))
                    .collect();
                if &ours != params {
                    problems.push(format!("{name}: source {params:?}, signature {ours:?}"));
                }
            }
        }
        for (param, _) in params.iter().filter(|(_, t)| *t == Some(ArgType::Buf)) {
            if !text.contains(&format!("{param} += {param}_at;")) {
                problems.push(format!(
                    "{name}: `{param}` is not moved to its region (`{param} += {param}_at;`)"
                ));
            }
        }
    }
    for sig in sigs {
        if !kernels.iter().any(|k| k.declared.0 == sig.name) {
            problems.push(format!("{}: a signature, not in the source", sig.name));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "
        // __kernel void commented_out(uint x)
        __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
        void one(__global u64 *restrict values, ulong values_at,
                 __global const u64 *restrict roots, ulong roots_at, // tables
                 uint count, u64 q)
        { values += values_at; roots += roots_at; }
        __kernel void two(__global u64 *dst, ulong dst_at) { dst += dst_at; }";

    /// `two` with its offset missing, or never applied.
    const NO_OFFSET: &str = "__kernel void two(__global u64 *dst) { }";
    const NOT_MOVED: &str =
        "__kernel void two(__global u64 *dst, ulong dst_at) { dst[0] = dst_at; }";

    kernel_sigs! {
        ONE = one(values: Buf, roots: Buf, count: U32, q: U64);
        TWO = two(dst: Buf);
        TWO_RENAMED = two(out: Buf);
        TWO_RETYPED = two(dst: U32);
    }

    #[test]
    fn signatures_match_declarations() {
        assert_eq!(check_source(SOURCE, &[&ONE, &TWO]), Ok(()));
        assert!(check_source(SOURCE, &[&ONE]).is_err());
        assert!(check_source(SOURCE, &[&ONE, &TWO_RENAMED]).is_err());
        assert!(check_source(SOURCE, &[&ONE, &TWO_RETYPED]).is_err());
        assert!(check_source("", &[&TWO]).is_err());
        assert!(check_source(NO_OFFSET, &[&TWO]).is_err());
        assert!(check_source(NOT_MOVED, &[&TWO]).is_err());
    }
}
