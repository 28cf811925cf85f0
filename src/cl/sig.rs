//! Kernel signatures declared once: each kernel's parameters, names and types in the order
//! its OpenCL declaration lists them ([`KernelSig`], written with [`kernel_sigs!`]). Kernels
//! are built and their arguments set through the signature, by name, and
//! [`check_source`] compares every signature with the `__kernel` declarations of a .cl
//! source, so that neither side can change alone (each source's unit test runs it).

use ocl::{Buffer, Kernel, Program};

use super::{set_arg_raw, KernelArg};
use crate::error::{Error, Result};

/// The type of one kernel parameter: `__global [const] u64 *` (a buffer of words), `uint`
/// or `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    Buf,
    U32,
    U64,
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
                Some((_, KernelArg::Buf(b))) => builder.arg(*b),
                Some((_, KernelArg::U32(v))) => builder.arg(*v),
                Some((_, KernelArg::U64(v))) => builder.arg(*v),
                None => match ty {
                    ArgType::Buf => builder.arg(None::<&Buffer<u64>>),
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

    /// Sets `args` on `kernel`: every parameter but those named in `preset` (set when the
    /// kernel was built), in declaration order, each named as declared and of its type.
    ///
    /// Errors (a logic error, nothing set past it): an argument missing, extra, out of
    /// order or of another type.
    ///
    /// # Safety
    /// `kernel` was built from this signature ([`KernelSig::build`]), so that the types
    /// checked here are the kernel's; the rest of [`set_arg_raw`]'s contract holds (every
    /// argument set anew before each enqueue, under the caller's lock).
    pub unsafe fn set<'a, 'b: 'a>(
        &self,
        kernel: &Kernel,
        args: impl IntoIterator<Item = &'a (&'a str, KernelArg<'b>)>,
        preset: &[&str],
    ) -> Result<()> {
        let mut given = args.into_iter();
        for (index, &(param, ty)) in self.params.iter().enumerate() {
            if preset.contains(&param) {
                continue;
            }
            match given.next() {
                Some(&(name, arg)) if name == param && arg.arg_type() == ty => {
                    // SAFETY: the kernel declares `ty` at `index` (built from this
                    // signature, checked against the source by its test); the rest is
                    // the caller's contract.
                    unsafe { set_arg_raw(kernel, index as u32, arg) }?
                }
                _ => return Err(self.mismatch(param)),
            }
        }
        match given.next() {
            Some((name, _)) => Err(self.mismatch(name)),
            None => Ok(()),
        }
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

/// The `__kernel` declarations of an OpenCL source. A parameter's type is a buffer if it
/// is a pointer, else `uint` or `u64`/`ulong`; None for any other type.
pub fn declared_kernels(source: &str) -> Vec<Declared> {
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
        let params = params
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
                (name.to_string(), ty)
            })
            .collect();
        kernels.push((name.trim().to_string(), params));
    }
    kernels
}

/// Whether `sigs` are exactly the kernels `source` declares: the same kernels, each with
/// the same parameter names and types in the same order. The error lists every difference.
pub fn check_source(source: &str, sigs: &[&KernelSig]) -> std::result::Result<(), String> {
    let declared = declared_kernels(source);
    let mut problems = Vec::new();
    for (name, params) in &declared {
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
    }
    for sig in sigs {
        if !declared.iter().any(|(name, _)| name == sig.name) {
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
        void one(__global u64 *restrict values, __global const u64 *restrict roots, // tables
                 uint count, u64 q)
        { }
        __kernel void two(__global u64 *dst) { }";

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
    }
}
