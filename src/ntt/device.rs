//! Device NTT: a plan per (context, N, moduli) holds the tables of every prime, uploaded
//! once, and the program specialised for N; transforms take `&self`, a queue, a buffer and
//! a polynomial count, and only enqueue (they return the events of their kernels).
//!
//! Two strategies (`NttStrategy`), both word for word equal to `ntt::host` and so to SEAL:
//! - `Naive`: radix-2, one launch per round, one work item per butterfly, global memory
//!   only (seed 001 Listing 14): the baseline.
//! - `Staged`: radix-8 or radix-16 in registers, local memory between steps (seed 001
//!   V-B5, Listing 17), and at most two passes over global memory; see `StagedLayout`,
//!   `StagedVariant` (the knobs of the layout, picked at plan creation) and
//!   `opencl/ntt.cl`. Staged plans also run the mod-down of rescaling and key switching
//!   with its element-wise steps fused into the passes' loads and stores
//!   ([`NttPlan::inverse_first_pass_from`], [`NttPlan::forward_moddown`]) and key
//!   switching with its decomposition and inner product fused likewise
//!   ([`NttPlan::forward_key_switch`]). There an inverse transform's second pass and the
//!   forward transforms' first passes that follow it run in one launch
//!   (`ntt_inv_fwd_strided`), and key switching's last pass starts the mod-down's inverse.
//!
//! Environment (read by [`NttStrategy::from_env`]): `SEAL_OPENCL_NTT=naive|staged`, and
//! for the staged strategy `SEAL_OPENCL_NTT_VARIANT`, a [`StagedVariant`] such as `r16` or
//! `r8g12c5` (default [`StagedVariant::DEFAULT`]), so that whole routines can be measured
//! per variant.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use parking_lot::Mutex;

use super::host::mul_root_scalar;
use super::{create_ntt_tables, NttTables};
use crate::arith::{Modulus, ShoupOperand};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{
    self, same_buffer, sources, Buffer, Context, Event, Kernel, Program, Queue, SpatialDims,
};
use crate::error::{Error, Result};

/// Environment variable that overrides the strategy of `NttStrategy::from_env`:
/// `naive` or `staged`.
pub const NTT_STRATEGY_ENV_VAR: &str = "SEAL_OPENCL_NTT";

/// Environment variable that picks the staged strategy's [`StagedVariant`] in
/// `NttStrategy::from_env`, e.g. `r16g12`.
pub const NTT_VARIANT_ENV_VAR: &str = "SEAL_OPENCL_NTT_VARIANT";

/// The device plan's sizes: N = 2^1 .. 2^17 (SEAL's smallest degree is 2; its own tests
/// use N = 4 .. 128).
pub const DEVICE_COEFF_COUNT_POWER_MIN: u32 = 1;
pub const DEVICE_COEFF_COUNT_POWER_MAX: u32 = 17;

/// The staged kernels' smallest N; a staged plan for smaller N runs the naive kernels
/// (a transform of fewer than 1024 points is a few tiny launches either way).
pub const STAGED_COEFF_COUNT_POWER_MIN: u32 = 10;

/// SEAL's largest number of primes in a coefficient modulus.
const MAX_COEFF_MODULUS_COUNT: usize = 64;

/// Words per prime in the `params` buffer (`PARAMS_STRIDE` in ntt.cl).
const PARAMS_STRIDE: usize = 8;

/// The largest sub-transform a staged work group holds: 2^12 words, 32 KiB (36 KiB with
/// the block kernels' padding), which fits the 48 KiB of local memory NVIDIA's OpenCL
/// gives a work group, and 512 work items of 8 values (256 of 16).
const MAX_LOG_GROUP_WORDS: u32 = 12;
/// The smallest work group the layout considers: 2^6 words.
const MIN_LOG_GROUP_WORDS: u32 = 6;

/// The most rows per work group of key switching's block pass a variant may ask for.
const MAX_KS_ROWS: u32 = 16;
/// The most columns per strided work group a variant may ask for at least: 2^8 words =
/// 2 KiB per row read.
const MAX_MIN_LOG_COLUMNS: u32 = 8;
/// The most output primes per work group of `ntt_inv_fwd_strided` a variant may ask for
/// (a key switch has at most K + 1 = 64).
const MAX_FAN_OUT: u32 = 64;
/// The automatic fan-out's aim: at least this many work groups per compute unit (see
/// `fan_out`).
const FAN_OUT_GROUPS_PER_UNIT: usize = 3;

/// Which kernels run a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttStrategy {
    /// Radix-2, one launch per round, global memory only (the baseline).
    Naive,
    /// Radix-8 or radix-16 steps through local memory, one or two launches, laid out as the
    /// variant says.
    Staged(StagedVariant),
}

impl NttStrategy {
    /// The staged strategy with the default variant.
    pub const STAGED: NttStrategy = NttStrategy::Staged(StagedVariant::DEFAULT);

    /// `SEAL_OPENCL_NTT` if set (`naive` | `staged`), else staged, with the variant of
    /// [`StagedVariant::from_env`]. The naive strategy has no layout and ignores the
    /// variant (so that benches that switch strategies run under one variable), but an
    /// invalid variant is an error either way.
    ///
    /// Errors: a value that does not parse.
    pub fn from_env() -> Result<Self> {
        let variant = StagedVariant::from_env()?;
        match env_value(NTT_STRATEGY_ENV_VAR)
            .map(|s| s.parse())
            .transpose()?
        {
            Some(NttStrategy::Naive) => Ok(NttStrategy::Naive),
            Some(NttStrategy::Staged(_)) | None => Ok(NttStrategy::Staged(variant)),
        }
    }
}

impl FromStr for NttStrategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "naive" => Ok(NttStrategy::Naive),
            "staged" => Ok(NttStrategy::STAGED),
            _ => Err(Error::invalid(format!(
                "{NTT_STRATEGY_ENV_VAR}={s:?} is not `naive` or `staged`"
            ))),
        }
    }
}

/// `naive`, `staged` (the default variant) or `staged(r16g11c4)`.
impl fmt::Display for NttStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NttStrategy::Naive => f.write_str("naive"),
            NttStrategy::Staged(StagedVariant::DEFAULT) => f.write_str("staged"),
            NttStrategy::Staged(v) => write!(f, "staged({v})"),
        }
    }
}

/// The knobs of the staged layout, picked when a plan is built. Every variant computes
/// the same words (each butterfly is SEAL's, whatever the grouping); they differ in
/// registers per work item, work-group sizes and memory traffic, so that one GPU run can
/// compare them.
///
/// Written `r<R>g<log words>c<log columns>k<R of key switching>p<rows of key
/// switching>o<fan-out>`, each part optional and the default's where left out:
/// `r4g8c2k4p2o0` (the default; `o0`: the fan-out chosen per launch), `r8g11c4k8p1`
/// (the default before 2026-11-24), `r16`, `r16g12c5`, `k16p1`, `o9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StagedVariant {
    log_regs: u32,
    log_group_words: u32,
    min_log_columns: u32,
    /// log2 of the values per work item in key switching's passes (at least 8 values in
    /// a one-pass layout: see `StagedLayout::new`).
    ks_log_regs: u32,
    /// Rows (output primes) per work group of key switching's block pass; with more than
    /// one, a row holds one block (see `ntt_fwd_block_ks`).
    ks_rows: u32,
    /// Output primes per work group of the inverse pass fused with forward passes
    /// (`ntt_inv_fwd_strided`: key switching's decomposition, the mod-down's rounding);
    /// 0: chosen per launch (`fan_out`).
    fan_out: u32,
}

impl StagedVariant {
    /// 4 values per work item (8 where the transform takes one pass: see
    /// `StagedLayout::new`), work groups of 2^8 words where the layout has the choice (64
    /// work items), strided work groups of at least 4 columns; in key switching's passes
    /// 4 values per work item and block work groups of two one-block rows. Measured on an
    /// H100, 2026-11-24:
    /// - key switching's block pass with 8 values took 232 registers per work item, 8
    ///   warps per SM, and K = 8 at N = 2^15 needed a second round over the SMs; 4 values
    ///   in 2 rows (96 registers, 128 items) fit it in one: 69.5 us against 97.0 for both
    ///   passes, 3-26% less at 2^13, 2^14, 2^16 (`benches/results/h100-2026-11-24-ks-radix4/`);
    /// - the other passes with 4 values in small groups (more, smaller work items for the
    ///   small batches a routine transforms): MulLin's kernel time 74.7 against 91.6 us at
    ///   2^13 and 138.9 against 148.6 at 2^15 for groups of 2^9 words against
    ///   `r8g11c4k4p2` (three rounds), then 72.4 / 76.3, 96.3 / 98.3, 135.0 / 140.7 and
    ///   230.2 / 237.8 at 2^13 .. 2^16 for 2^8 words against 2^9 (three rounds)
    ///   (`benches/results/h100-2026-11-24-radix4-default/`).
    ///
    /// (16 values in key switching made MulLin 4% faster at 2^15 but 8-40% slower
    /// elsewhere: `benches/results/h100-2026-11-24-session/`.)
    pub const DEFAULT: StagedVariant = StagedVariant {
        log_regs: 2,
        log_group_words: 8,
        min_log_columns: 2,
        ks_log_regs: 2,
        ks_rows: 2,
        fan_out: 0,
    };

    /// A variant with 2^`log_regs` values per work item (2, 3 or 4: radix-4, 8 or 16
    /// steps), work groups of 2^`log_group_words` words where the layout has the choice
    /// (6 ..= 12; larger groups than the device holds are capped when a plan is built),
    /// and at least 2^`min_log_columns` columns per strided work group (0 ..= 8); key
    /// switching's knobs as the default's.
    ///
    /// Errors: a knob outside its range.
    pub fn new(log_regs: u32, log_group_words: u32, min_log_columns: u32) -> Result<Self> {
        if !(2..=4).contains(&log_regs)
            || !(MIN_LOG_GROUP_WORDS..=MAX_LOG_GROUP_WORDS).contains(&log_group_words)
            || min_log_columns > MAX_MIN_LOG_COLUMNS
        {
            return Err(Error::invalid(format!(
                "staged NTT variant: 2^{log_regs} values per work item (2^2, 2^3 or 2^4), \
                 work groups of 2^{log_group_words} words (2^{MIN_LOG_GROUP_WORDS} ..= \
                 2^{MAX_LOG_GROUP_WORDS}), at least 2^{min_log_columns} columns (at most \
                 2^{MAX_MIN_LOG_COLUMNS})"
            )));
        }
        Ok(StagedVariant {
            log_regs,
            log_group_words,
            min_log_columns,
            ks_log_regs: StagedVariant::DEFAULT.ks_log_regs,
            ks_rows: StagedVariant::DEFAULT.ks_rows,
            fan_out: StagedVariant::DEFAULT.fan_out,
        })
    }

    /// The same variant with 2^`log_regs` values per work item in key switching's passes
    /// (2, 3 or 4: radix-4, 8 or 16 steps; at least 8 in a one-pass layout, and the
    /// plan's own layout where the device cannot hold this one with as many passes).
    ///
    /// Errors: `log_regs` is not 2, 3 or 4.
    pub fn with_ks_log_regs(mut self, log_regs: u32) -> Result<Self> {
        if !(2..=4).contains(&log_regs) {
            return Err(Error::invalid(format!(
                "staged NTT variant: 2^{log_regs} values per work item in key switching \
                 (2^2, 2^3 or 2^4)"
            )));
        }
        self.ks_log_regs = log_regs;
        Ok(self)
    }

    /// The same variant with `rows` rows (output primes I) per work group of key
    /// switching's block pass, 1 ..= 16, each a block of its own (the plan holds fewer
    /// where the device's work groups or the kernel's registers do not allow them).
    ///
    /// Errors: `rows` out of range.
    pub fn with_ks_rows(mut self, rows: u32) -> Result<Self> {
        if !(1..=MAX_KS_ROWS).contains(&rows) {
            return Err(Error::invalid(format!(
                "staged NTT variant: {rows} rows per key-switching work group (1 ..= \
                 {MAX_KS_ROWS})"
            )));
        }
        self.ks_rows = rows;
        Ok(self)
    }

    /// Rows (output primes) per work group of key switching's block pass.
    pub fn ks_rows(&self) -> u32 {
        self.ks_rows
    }

    /// The same variant with `outs` output primes (1 ..= 64) per work group of the inverse
    /// pass fused with forward passes, or 0: as many as keep at least 3 work groups per
    /// compute unit (the default). Each work group finishes the inverse of its columns and
    /// runs the forward pass under its output primes: more outputs per group repeat the
    /// inverse less, fewer spread a small batch over more of the device.
    ///
    /// Errors: `outs` out of range.
    pub fn with_fan_out(mut self, outs: u32) -> Result<Self> {
        if outs > MAX_FAN_OUT {
            return Err(Error::invalid(format!(
                "staged NTT variant: {outs} output primes per fused work group (1 ..= \
                 {MAX_FAN_OUT}, or 0: chosen per launch)"
            )));
        }
        self.fan_out = outs;
        Ok(self)
    }

    /// Output primes per work group of the inverse pass fused with forward passes (0:
    /// chosen per launch).
    pub fn fan_out(&self) -> u32 {
        self.fan_out
    }

    /// log2 of the values each work item of key switching's two passes holds.
    pub fn ks_log_regs(&self) -> u32 {
        self.ks_log_regs
    }

    /// log2 of the values each work item holds (and of the radix of a step).
    pub fn log_regs(&self) -> u32 {
        self.log_regs
    }

    /// log2 of the words a work group aims to hold.
    pub fn log_group_words(&self) -> u32 {
        self.log_group_words
    }

    /// log2 of the fewest columns per strided work group.
    pub fn min_log_columns(&self) -> u32 {
        self.min_log_columns
    }

    /// `SEAL_OPENCL_NTT_VARIANT` if set, else the default.
    ///
    /// Errors: a value that does not parse.
    pub fn from_env() -> Result<Self> {
        env_value(NTT_VARIANT_ENV_VAR).map_or(Ok(StagedVariant::DEFAULT), |v| v.parse())
    }
}

/// The value of environment variable `name`, None when unset or blank.
fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

impl Default for StagedVariant {
    fn default() -> Self {
        StagedVariant::DEFAULT
    }
}

impl FromStr for StagedVariant {
    type Err = Error;

    /// Parts `r4` / `r8` / `r16`, `g<6..=12>`, `c<0..=8>`, `k4` / `k8` / `k16`,
    /// `p<1..=16>`, `o<0..=64>` in any order, each at most once.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(format!(
                "staged NTT variant {s:?}: {why}; write r<4|8|16>g<log words>c<log columns>\
                 k<4|8|16>p<rows>o<fan-out>, e.g. r16g12c4k8p1o0, any part left out"
            ))
        };
        let text = s.trim().to_ascii_lowercase();
        // ASCII only, so that the byte slicing below stays on character boundaries.
        if !text.is_ascii() {
            return Err(bad("not ASCII"));
        }
        let mut knobs: [Option<u32>; 6] = [None; 6];
        let mut rest = text.as_str();
        while let Some(key) = rest.chars().next() {
            let tail = &rest[1..];
            let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let value: u32 = tail[..digits]
                .parse()
                .map_err(|_| bad(&format!("`{key}` wants a number")))?;
            let slot = match key {
                'r' => 0,
                'g' => 1,
                'c' => 2,
                'k' => 3,
                'p' => 4,
                'o' => 5,
                _ => return Err(bad(&format!("unknown part `{key}`"))),
            };
            if knobs[slot].replace(value).is_some() {
                return Err(bad(&format!("`{key}` given twice")));
            }
            rest = &tail[digits..];
        }
        let d = StagedVariant::DEFAULT;
        let log_regs_of = |knob: u32, key: char| match knob {
            4 => Ok(2),
            8 => Ok(3),
            16 => Ok(4),
            _ => Err(bad(&format!("{key} is 4, 8 or 16"))),
        };
        let v = StagedVariant::new(
            knobs[0].map_or(Ok(d.log_regs), |r| log_regs_of(r, 'r'))?,
            knobs[1].unwrap_or(d.log_group_words),
            knobs[2].unwrap_or(d.min_log_columns),
        )
        .map_err(|e| bad(&e.to_string()))?;
        let v = match knobs[3] {
            None => v,
            Some(k) => v
                .with_ks_log_regs(log_regs_of(k, 'k')?)
                .map_err(|e| bad(&e.to_string()))?,
        };
        v.with_ks_rows(knobs[4].unwrap_or(d.ks_rows))
            .and_then(|v| v.with_fan_out(knobs[5].unwrap_or(d.fan_out)))
            .map_err(|e| bad(&e.to_string()))
    }
}

/// The canonical form, every part written: `r4g8c2k4p2o0`.
impl fmt::Display for StagedVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "r{}g{}c{}k{}p{}o{}",
            1u32 << self.log_regs,
            self.log_group_words,
            self.min_log_columns,
            1u32 << self.ks_log_regs,
            self.ks_rows,
            self.fan_out
        )
    }
}

/// How the staged NTT splits N = S * G (the build options of its program).
///
/// With `log_s = 0` one launch (`ntt_*_block`, G = N) does every round in local memory.
/// Otherwise the strided launch does the S-point sub-transforms of the elements congruent
/// mod G (forward: the first `log_s` rounds; inverse: the last), C = 2^`log_c` classes per
/// work group, and the block launch does the G-point sub-transforms of contiguous blocks
/// (forward: the last rounds, with the final reduction; inverse: the first), B = 2^`log_b`
/// blocks per work group. Every work item holds R = 2^`log_r` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagedLayout {
    log_n: u32,
    log_r: u32,
    log_s: u32,
    log_c: u32,
    log_b: u32,
}

impl StagedLayout {
    /// The layout of `variant` for N = 2^`log_n` on a device with `local_mem_bytes` of
    /// local memory per work group and work groups of at most `max_work_group_size` items:
    /// the largest power-of-two group of at most 2^12 words that fits (with padding), one
    /// launch if N fits it, else S and G as equal as possible (G the larger); C and B
    /// such that work groups hold the variant's words where they can.
    pub fn new(
        log_n: u32,
        local_mem_bytes: u64,
        max_work_group_size: usize,
        variant: StagedVariant,
    ) -> Result<Self> {
        let log_r = variant.log_regs;
        let fits = |log_words: u32| {
            let words = 1u64 << log_words;
            (words + (words >> log_r)) * 8 <= local_mem_bytes
                && (words >> log_r) as usize <= max_work_group_size
        };
        let log_cap = (MIN_LOG_GROUP_WORDS..=MAX_LOG_GROUP_WORDS)
            .rev()
            .find(|&l| fits(l))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "device has too little local memory ({local_mem_bytes} bytes) or too \
                     small work groups ({max_work_group_size}) for the staged NTT"
                ))
            })?;
        if log_n <= log_cap {
            // Four values per item only where the transform takes two passes: in one,
            // groups of up to 2^12 words would hold 1024 items (key switching at 2^12, K = 2:
            // 27.5 against 25.9 us with 8, H100, 2026-11-24).
            if log_r < 3 {
                return StagedLayout::new(
                    log_n,
                    local_mem_bytes,
                    max_work_group_size,
                    StagedVariant {
                        log_regs: 3,
                        ..variant
                    },
                );
            }
            return Ok(StagedLayout {
                log_r,
                log_s: 0,
                log_c: 0,
                log_b: 0,
                log_n,
            });
        }
        let log_g = log_n.div_ceil(2).min(log_cap);
        let log_s = log_n - log_g;
        if log_s < log_r || log_s > log_cap {
            return Err(Error::invalid(format!(
                "N = 2^{log_n} needs more than two passes on this device \
                 (work groups of at most 2^{log_cap} words)"
            )));
        }
        let target = variant.log_group_words;
        let log_c = variant
            .min_log_columns
            .max(target.saturating_sub(log_s))
            .min(log_cap - log_s)
            .min(log_g);
        let log_b = target.saturating_sub(log_g).min(log_cap - log_g).min(log_s);
        Ok(StagedLayout {
            log_r,
            log_s,
            log_c,
            log_b,
            log_n,
        })
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// log2 of R, the values per work item.
    pub fn log_r(&self) -> u32 {
        self.log_r
    }

    /// log2 of S, the size of the strided sub-transforms (0: no strided launch).
    pub fn log_s(&self) -> u32 {
        self.log_s
    }

    /// log2 of G, the size of the blocks.
    pub fn log_g(&self) -> u32 {
        self.log_n - self.log_s
    }

    /// log2 of C, the classes per strided work group.
    pub fn log_c(&self) -> u32 {
        self.log_c
    }

    /// log2 of B, the blocks per block work group.
    pub fn log_b(&self) -> u32 {
        self.log_b
    }

    /// Launches per transform: 1 or 2.
    pub fn launches(&self) -> usize {
        if self.log_s == 0 {
            1
        } else {
            2
        }
    }

    /// Work items per block work group (B * G / R).
    pub fn block_work_group_size(&self) -> usize {
        1 << (self.log_b + self.log_g() - self.log_r)
    }

    /// Local memory per block work group in bytes: B * G words, plus one in R of padding.
    pub fn block_local_bytes(&self) -> usize {
        let words = 1usize << (self.log_b + self.log_g());
        (words + (words >> self.log_r)) * 8
    }

    /// Work items per strided work group (S * C / R), None without a strided launch.
    pub fn strided_work_group_size(&self) -> Option<usize> {
        (self.log_s != 0).then(|| 1 << (self.log_s + self.log_c - self.log_r))
    }

    /// Local memory per strided work group in bytes (S * C words), None without one.
    pub fn strided_local_bytes(&self) -> Option<usize> {
        (self.log_s != 0).then(|| 8 << (self.log_s + self.log_c))
    }

    /// The same layout with one block per block work group (B = 1).
    fn with_one_block(self) -> Self {
        StagedLayout { log_b: 0, ..self }
    }

    fn build_options(&self) -> String {
        format!(
            "-D LOG_N={} -D LOG_R={} -D LOG_S={} -D LOG_C={} -D LOG_B={}",
            self.log_n, self.log_r, self.log_s, self.log_c, self.log_b
        )
    }
}

/// Key switching's block pass with `want` rows per work group: the layout with one block
/// per row and the most rows up to `want` that the device's work groups and local memory
/// hold; None where that is one row (the layout's own blocks then).
fn ks_rows_that_fit(
    ks: StagedLayout,
    want: u32,
    info: &cl::DeviceInfoSummary,
) -> Option<(StagedLayout, u32)> {
    let one_block = ks.with_one_block();
    let by_items = info.max_work_group_size / one_block.block_work_group_size();
    let by_memory = info.local_mem_bytes as usize / one_block.block_local_bytes();
    let rows = (want as usize).min(by_items).min(by_memory) as u32;
    (rows > 1).then_some((one_block, rows))
}

/// Whether key switching's block pass with `rows` rows of `ks`'s blocks also holds each
/// row's forward roots (16 bytes per word of its blocks) in local memory: its J transforms
/// then read them once per work group (`stage_block_roots` in ntt.cl). Measured on an H100
/// (2026-11-24, K = 8, two rounds, `benches/results/h100-2026-11-24-session11/`): the
/// block pass 42.6-42.7 against 43.5-43.6 us at 2^15, 78.4-78.5 against 80.3-80.7 at 2^16,
/// 21.6-21.9 against 22.1-23.5 at 2^14, the same 94 registers. Two-pass layouts only: a
/// one-pass row is a whole transform, whose roots alone take twice its words (PoCL 3.1
/// crashed inside such a build: 16 rows at 2^10, 2048 work items, 256 KB of roots).
fn ks_local_roots_fit(ks: StagedLayout, rows: u32, info: &cl::DeviceInfoSummary) -> bool {
    let roots = 16usize << (ks.log_b + ks.log_g());
    let fits = rows as usize * (ks.block_local_bytes() + roots) <= info.local_mem_bytes as usize;
    ks.log_s != 0 && fits
}

/// One kernel launch of a transform: the kernel with every argument but the values buffer
/// (and `reduce`) set at plan time, and its NDRange.
struct Launch {
    kernel: Kernel,
    /// Work items per residue polynomial.
    items_per_residue: usize,
    /// The required work-group size (staged kernels), or None (naive).
    work_group: Option<usize>,
    /// Whether the kernel's first own argument (`OWN_ARGS`) is the final-reduction switch.
    takes_reduce: bool,
}

/// Argument indices shared by every NTT kernel in ntt.cl: the values, and the number of
/// primes per polynomial (`coeff_modulus_size`: residue r uses prime r % it). The tables
/// (1, 2) are set at plan time; the kernel's own arguments follow from `OWN_ARGS`, in the
/// order ntt.cl declares them (`reduce` first where a kernel takes it).
const VALUES_ARG: u32 = 0;
const PRIMES_ARG: u32 = 3;
const OWN_ARGS: u32 = 4;

/// The launches of a forward and an inverse transform, in order, and a staged plan's
/// fused passes.
struct Launches {
    forward: Vec<Launch>,
    inverse: Vec<Launch>,
    fused: Option<FusedPasses>,
}

/// A staged plan's passes with specialised loads and stores (`opencl/ntt.cl`):
/// `inv_gather` replaces the inverse's first pass (`ntt_inv_block`), `inv_galois` the
/// galois permutation and that pass of a rotation; the mod-down's
/// (`moddown_block`) and key switching's (`ks_block`) forward passes replace the
/// forward's last; with two passes, `inv_fwd_strided` (the mod-down's) and
/// `ks_inv_fwd_strided` (key switching's build) run the inverse's second pass and the
/// forward's first ones in one launch. Each holds its tables; the rest is set per call.
struct FusedPasses {
    inv_gather: Launch,
    inv_galois: Launch,
    inv_fwd_strided: Option<Launch>,
    moddown_block: Launch,
    ks_inv_fwd_strided: Option<Launch>,
    /// Launched over ceil((K + 1) / ks_rows) "residues": each covers ks_rows rows.
    ks_block: Launch,
    ks_rows: usize,
    /// Whether `ks_block` stages its roots in local memory (`ks_local_roots_fit`).
    ks_local_roots: bool,
    /// Output primes per work group of the `*inv_fwd_strided` launches (0: chosen per
    /// launch).
    fan_out: usize,
    /// The device's compute units, for the chosen fan-out.
    compute_units: usize,
}

/// `ntt_inv_fwd_strided`'s `kind`: the loads of ntt.cl's `LOAD_MODDOWN` and
/// `LOAD_DECOMPOSE`.
const LOAD_MODDOWN: u32 = 1;
const LOAD_DECOMPOSE: u32 = 2;

/// A kernel argument after the shared four, at plan time: a buffer placeholder (set per
/// call), a 32-bit value (fixed, or a placeholder set per call), or the plan's inverse
/// root tables (fixed).
#[derive(Clone, Copy)]
enum Extra {
    Buf,
    U32(u32),
    InvRoots,
}

/// Key switching's decomposition and inner product with the key after the first pass of
/// the target's inverse NTT, as [`NttPlan::forward_key_switch`] runs them at level K over
/// the plan's first K + 1 primes (the level's, then the special prime): with t the target
/// in coefficient form (canonical), for c < 2 and I < K + 1,
///     s(c, I) = sum_{J < K} NTT_I(t[J] mod q_I) * key[J][c][kp(I)] mod q_I,
/// with the target's own residue J in NTT form in place of NTT_J(t[J]) (SEAL's choice),
/// kp(I) = I for I < K and `key_special_index` for I = K; prod[c * K + I] = s(c, I) for
/// I < K, canonical, and last[c] = s(c, K) after the first pass of its inverse NTT under
/// the special prime (the mod-down's `last`, < 2 q). The host composition is the inverse
/// NTT, `host::ckks_ks_decompose`, the lazy forward NTT, `host::ckks_ks_inner_product`
/// and the first rounds of the lazy inverse NTT
/// (`host::inverse_ntt_negacyclic_harvey_lazy_rounds`).
pub struct KeySwitch<'a> {
    /// The target's K residues after the first pass of their inverse NTT
    /// ([`NttPlan::inverse_first_pass_from`]): with a one-pass layout, canonical
    /// coefficients.
    pub t_target: &'a Buffer<u64>,
    /// The target in NTT form: K residues from residue `target_first`.
    pub target: &'a Buffer<u64>,
    pub target_first: usize,
    /// SEAL's key vector, contiguous: word ((J * 2 + c) * key_stride_primes + p) * N + k.
    pub key: &'a Buffer<u64>,
    pub key_stride_primes: usize,
    pub key_special_index: usize,
    /// Products accumulated between reductions of the 128-bit sums (at least 1).
    pub reduce_every: u32,
    /// Outputs: 2 K and 2 residues.
    pub prod: &'a Buffer<u64>,
    pub last: &'a Buffer<u64>,
    /// The intermediate of a two-pass layout (K (K + 1) N words); unused with one pass.
    pub scratch: &'a Buffer<u64>,
    pub k: usize,
}

/// The mod-down of SEAL's rescale (`divide_and_round_q_last_ntt_inplace`) and key
/// switching (the end of `switch_key_inplace`) after the first pass of the last residue's
/// inverse NTT, as [`NttPlan::forward_moddown`] runs it over `count` polynomials and the
/// plan's first `primes` primes: for p < count and i < primes,
///     dst[p * dst_stride + i] = (src[p * src_stride + i] - NTT_i(round(last[p]))) * inv_i
///                                [+ acc[p * dst_stride + i] for p < acc_polys],
/// everything mod q_i, where round is SEAL's rounding of the last residue and its
/// reduction mod q_i (`host::ckks_moddown_prep`) and the difference and product those of
/// `host::ckks_divide_round_finish`. Strides count residues.
pub struct ModDown<'a> {
    /// `count` residues under the plan's prime `last_prime` after the first pass of their
    /// inverse transform, < 2 q_last ([`NttPlan::inverse_first_pass_from`], or key
    /// switching's `last`): with a one-pass layout, coefficients.
    pub last: &'a Buffer<u64>,
    pub last_prime: usize,
    /// The intermediate of a two-pass layout (count * primes * N words); unused with one
    /// pass (any buffer then, e.g. `last`).
    pub scratch: &'a Buffer<u64>,
    /// Canonical on exit.
    pub dst: &'a Buffer<u64>,
    pub dst_stride: usize,
    pub src: &'a Buffer<u64>,
    pub src_stride: usize,
    /// `primes` Shoup pairs (operand, quotient) of q_last^-1 mod q_i.
    pub inv: &'a Buffer<u64>,
    /// Canonical words added to the first `acc_polys` polynomials, laid out as dst (acc
    /// may be dst: key switching adds into the ciphertext); unused with `acc_polys` = 0.
    pub acc: &'a Buffer<u64>,
    pub acc_polys: usize,
    pub count: usize,
    pub primes: usize,
}

/// The forward and inverse negacyclic NTT of one parameter set on one device: N and the
/// RNS primes, their tables in device memory, and the kernels built for them.
///
/// Transforms take `&self` and may be called from several threads: the kernels are
/// shared behind a lock held from setting the values argument to enqueueing (OpenCL
/// captures arguments at enqueue).
pub struct NttPlan {
    ctx: Arc<Context>,
    coeff_count_power: u32,
    moduli: Vec<Modulus>,
    strategy: NttStrategy,
    layout: Option<StagedLayout>,
    launches: Mutex<Launches>,
    /// L tables of N (operand, quotient) pairs: SEAL's `root_powers` of each prime.
    _root_powers: Buffer<u64>,
    /// The same for SEAL's `inv_root_powers`.
    _inv_root_powers: Buffer<u64>,
    /// `PARAMS_STRIDE` words per prime: q, N^-1 (operand, quotient), the last inverse root
    /// times N^-1 (operand, quotient), q's Barrett words r1, r0.
    _params: Buffer<u64>,
}

impl NttPlan {
    /// A plan for N = 2^`coeff_count_power` over `moduli` (SEAL's order: residue j of each
    /// polynomial is reduced mod `moduli[j]`). Uploads the tables on `queue` (blocking).
    ///
    /// Errors: N outside 2^10 ..= 2^17, `moduli` empty or more than 64, a modulus without
    /// a primitive 2N-th root, or a device that cannot hold the staged work groups.
    pub fn new(
        ctx: &Arc<Context>,
        queue: &Queue,
        coeff_count_power: u32,
        moduli: &[Modulus],
        strategy: NttStrategy,
    ) -> Result<Self> {
        check_coeff_count_power(coeff_count_power)?;
        Self::from_tables(
            ctx,
            queue,
            &create_ntt_tables(coeff_count_power, moduli)?,
            strategy,
        )
    }

    /// A plan over tables already built (one per prime, all of the same N).
    pub fn from_tables(
        ctx: &Arc<Context>,
        queue: &Queue,
        tables: &[NttTables],
        strategy: NttStrategy,
    ) -> Result<Self> {
        let first = tables
            .first()
            .ok_or_else(|| Error::invalid("invalid modulus: no moduli given"))?;
        let log_n = first.coeff_count_power();
        check_coeff_count_power(log_n)?;
        if tables.len() > MAX_COEFF_MODULUS_COUNT {
            return Err(Error::invalid(format!(
                "{} moduli given; SEAL allows at most {MAX_COEFF_MODULUS_COUNT}",
                tables.len()
            )));
        }
        if tables.iter().any(|t| t.coeff_count_power() != log_n) {
            return Err(Error::invalid("NTT tables of different sizes in one plan"));
        }
        let info = ctx.info();
        let strategy = if log_n < STAGED_COEFF_COUNT_POWER_MIN {
            NttStrategy::Naive
        } else {
            strategy
        };
        let layout = match strategy {
            NttStrategy::Naive => None,
            NttStrategy::Staged(variant) => Some(StagedLayout::new(
                log_n,
                info.local_mem_bytes,
                info.max_work_group_size,
                variant,
            )?),
        };
        let options = match layout {
            None => format!("-D LOG_N={log_n}"),
            Some(layout) => layout.build_options(),
        };
        let program = ctx.program(&[sources::ARITH, sources::NTT], &options)?;
        // Key switching's passes with the variant's own values per work item there, where
        // the device holds that layout with the same split (else the plan's layout).
        let ks_layout = match (strategy, layout) {
            (NttStrategy::Staged(variant), Some(layout)) => Some(
                StagedLayout::new(
                    log_n,
                    info.local_mem_bytes,
                    info.max_work_group_size,
                    StagedVariant {
                        log_regs: variant.ks_log_regs(),
                        ..variant
                    },
                )
                .ok()
                // The same split (S, G): key switching's last pass starts the
                // mod-down's inverse, which the plan's passes finish.
                .filter(|ks| ks.log_s() == layout.log_s())
                .unwrap_or(layout),
            ),
            _ => None,
        };

        let pairs = |pick: fn(&NttTables) -> &[ShoupOperand]| {
            tables
                .iter()
                .flat_map(|t| pick(t).iter().flat_map(|w| [w.operand, w.quotient]))
                .collect::<Vec<u64>>()
        };
        let root_powers = ctx.upload(queue, &pairs(NttTables::get_from_root_powers))?;
        let inv_root_powers = ctx.upload(queue, &pairs(NttTables::get_from_inv_root_powers))?;
        let mut params = vec![0u64; PARAMS_STRIDE * tables.len()];
        for (t, p) in tables.iter().zip(params.chunks_exact_mut(PARAMS_STRIDE)) {
            let inv_n = t.inv_degree_modulo();
            let last_root = t.get_from_inv_root_powers()[t.coeff_count() - 1];
            let scaled = mul_root_scalar(last_root, inv_n, t.modulus());
            p[..7].copy_from_slice(&[
                t.modulus().value(),
                inv_n.operand,
                inv_n.quotient,
                scaled.operand,
                scaled.quotient,
                t.modulus().const_ratio()[1],
                t.modulus().const_ratio()[0],
            ]);
        }
        let params = ctx.upload(queue, &params)?;

        // Every kernel: (values, roots, params, L, ...), values set per call; `extra`
        // gives the arguments after these four: fixed values, or placeholders of the
        // per-call ones.
        let l = tables.len() as u32;
        let kernel_of = |program: &Program,
                         name: &str,
                         roots: &Buffer<u64>,
                         extra: &[Extra]|
         -> Result<Kernel> {
            let mut builder = Kernel::builder();
            builder
                .program(program)
                .name(name)
                .arg(None::<&Buffer<u64>>)
                .arg(roots)
                .arg(&params)
                .arg(l);
            for x in extra {
                match *x {
                    Extra::Buf => builder.arg(None::<&Buffer<u64>>),
                    Extra::U32(v) => builder.arg(v),
                    Extra::InvRoots => builder.arg(&inv_root_powers),
                };
            }
            Ok(builder.build()?)
        };
        let kernel = |name: &str, roots: &Buffer<u64>, extra: &[Extra]| {
            kernel_of(&program, name, roots, extra)
        };
        let n = 1usize << log_n;
        let launches = match layout {
            None => {
                // One launch per round with (reduce, log_gap); reduce only in the last.
                let round = |name: &str, roots: &Buffer<u64>, log_gap: u32, last: bool| {
                    Ok::<_, Error>(Launch {
                        kernel: kernel(name, roots, &[Extra::U32(0), Extra::U32(log_gap)])?,
                        items_per_residue: n / 2,
                        work_group: None,
                        takes_reduce: last,
                    })
                };
                Launches {
                    forward: (0..log_n)
                        .rev()
                        .map(|g| round("ntt_fwd_naive", &root_powers, g, g == 0))
                        .collect::<Result<_>>()?,
                    inverse: (0..log_n)
                        .map(|g| round("ntt_inv_naive", &inv_root_powers, g, g == log_n - 1))
                        .collect::<Result<_>>()?,
                    fused: None,
                }
            }
            Some(layout) => {
                // Every argument after the shared four is set per call; `reduce`: whether
                // the first is the final-reduction switch.
                let staged = |name: &str,
                              roots: &Buffer<u64>,
                              wg: usize,
                              reduce: bool,
                              per_call: &[Extra]| {
                    Ok::<_, Error>(Launch {
                        kernel: kernel(name, roots, per_call)?,
                        items_per_residue: n >> layout.log_r,
                        work_group: Some(wg),
                        takes_reduce: reduce,
                    })
                };
                // Key switching's passes, from the build of its own layout (the context's
                // program cache gives the plan's build back when the layouts are equal),
                // with the variant's rows per block work group where the device holds
                // them (else one).
                let ks = ks_layout.unwrap_or(layout);
                let (want_rows, fan_out) = match strategy {
                    NttStrategy::Staged(variant) => (variant.ks_rows(), variant.fan_out()),
                    NttStrategy::Naive => (1, 1),
                };
                let ks_block_args = [B, B, U, B, U, U, U, B, B, Extra::InvRoots];
                let ks_build = |ks: StagedLayout, rows: u32| {
                    let local_roots = ks_local_roots_fit(ks, rows, info);
                    let options = format!(
                        "{} -D KS_ROWS={rows} -D KS_LOCAL_ROOTS={}",
                        ks.build_options(),
                        u32::from(local_roots)
                    );
                    let program = ctx.program(&[sources::ARITH, sources::NTT], &options)?;
                    let block =
                        kernel_of(&program, "ntt_fwd_block_ks", &root_powers, &ks_block_args)?;
                    Ok::<_, Error>((ks, rows, program, block, local_roots))
                };
                let (ks, ks_rows, ks_program, ks_block_kernel, ks_local_roots) =
                    match ks_rows_that_fit(ks, want_rows, info) {
                        Some((one_block, rows)) => {
                            let built = ks_build(one_block, rows)?;
                            let wg = rows as usize * one_block.block_work_group_size();
                            let holds = ctx.kernel_work_group_size(&built.3)?;
                            if holds >= wg {
                                built
                            } else {
                                tracing::debug!(
                                    rows,
                                    holds,
                                    wg,
                                    "key switching's rows per work group exceed what the \
                                     kernel's build holds; one row"
                                );
                                ks_build(ks, 1)?
                            }
                        }
                        None => ks_build(ks, 1)?,
                    };
                let ks_staged = |name: &str, wg: usize, per_call: &[Extra]| {
                    Ok::<_, Error>(Launch {
                        kernel: kernel_of(&ks_program, name, &root_powers, per_call)?,
                        items_per_residue: n >> ks.log_r,
                        work_group: Some(wg),
                        takes_reduce: false,
                    })
                };
                const B: Extra = Extra::Buf;
                const U: Extra = Extra::U32(0);
                // ntt_inv_fwd_strided: in, kind, in_prime, outs, chunks, inverse tables.
                const INV_FWD: [Extra; 6] = [B, U, U, U, U, Extra::InvRoots];
                let block = layout.block_work_group_size();
                let strided = layout.strided_work_group_size();
                let mut forward = Vec::with_capacity(2);
                let mut inverse = Vec::with_capacity(2);
                if let Some(wg) = strided {
                    forward.push(staged("ntt_fwd_strided", &root_powers, wg, false, &[])?);
                }
                forward.push(staged("ntt_fwd_block", &root_powers, block, true, &[U])?);
                inverse.push(staged(
                    "ntt_inv_block",
                    &inv_root_powers,
                    block,
                    true,
                    &[U],
                )?);
                if let Some(wg) = strided {
                    inverse.push(staged("ntt_inv_strided", &inv_root_powers, wg, true, &[U])?);
                }
                // Their own arguments: see ntt.cl and the launches in
                // `inverse_first_pass_from`, `forward_moddown` and `forward_key_switch`.
                let fused = FusedPasses {
                    inv_gather: staged(
                        "ntt_inv_block_gather",
                        &inv_root_powers,
                        block,
                        true,
                        &[U, B, U, U],
                    )?,
                    inv_galois: staged(
                        "ntt_inv_block_galois",
                        &inv_root_powers,
                        block,
                        true,
                        &[U, B, U, B, U],
                    )?,
                    inv_fwd_strided: strided
                        .map(|wg| staged("ntt_inv_fwd_strided", &root_powers, wg, false, &INV_FWD))
                        .transpose()?,
                    moddown_block: staged(
                        "ntt_fwd_block_moddown",
                        &root_powers,
                        block,
                        false,
                        &[B, U, B, U, B, U, B, B, U],
                    )?,
                    ks_inv_fwd_strided: ks
                        .strided_work_group_size()
                        .map(|wg| ks_staged("ntt_inv_fwd_strided", wg, &INV_FWD))
                        .transpose()?,
                    ks_block: Launch {
                        kernel: ks_block_kernel,
                        items_per_residue: ks_rows as usize * (n >> ks.log_r),
                        work_group: Some(ks_rows as usize * ks.block_work_group_size()),
                        takes_reduce: false,
                    },
                    ks_rows: ks_rows as usize,
                    ks_local_roots,
                    fan_out: fan_out as usize,
                    compute_units: info.compute_units as usize,
                };
                Launches {
                    forward,
                    inverse,
                    fused: Some(fused),
                }
            }
        };

        Ok(NttPlan {
            ctx: Arc::clone(ctx),
            coeff_count_power: log_n,
            moduli: tables.iter().map(|t| *t.modulus()).collect(),
            strategy,
            layout,
            launches: Mutex::new(launches),
            _root_powers: root_powers,
            _inv_root_powers: inv_root_powers,
            _params: params,
        })
    }

    pub fn coeff_count_power(&self) -> u32 {
        self.coeff_count_power
    }

    pub fn coeff_count(&self) -> usize {
        1 << self.coeff_count_power
    }

    /// L, the number of primes (residues per polynomial).
    pub fn coeff_modulus_size(&self) -> usize {
        self.moduli.len()
    }

    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    pub fn strategy(&self) -> NttStrategy {
        self.strategy
    }

    /// The staged layout (None for the naive strategy).
    pub fn staged_layout(&self) -> Option<StagedLayout> {
        self.layout
    }

    /// Rows (output primes) per work group of key switching's block pass: the variant's
    /// `p` where the device holds it, else fewer; 1 for naive plans.
    pub fn key_switch_rows(&self) -> usize {
        self.launches.lock().fused.as_ref().map_or(1, |f| f.ks_rows)
    }

    /// Whether key switching's block pass reads its roots from local memory
    /// (`ks_local_roots_fit`); false for naive plans.
    pub fn key_switch_local_roots(&self) -> bool {
        self.launches
            .lock()
            .fused
            .as_ref()
            .is_some_and(|f| f.ks_local_roots)
    }

    /// Kernel launches per transform (log N for naive, 1 or 2 for staged).
    pub fn launches_per_transform(&self) -> usize {
        match self.layout {
            Some(layout) => layout.launches(),
            None => self.coeff_count_power as usize,
        }
    }

    /// Forward NTT of the first `count` polynomials in `values` (L residues of N words
    /// each, SEAL's layout). On entry coefficients in [0, 4q), standard order; on exit
    /// evaluations in [0, q), bit-reversed: SEAL's `ntt_negacyclic_harvey` on every
    /// residue. Enqueued on `queue`; returns the events of its kernels in launch order.
    ///
    /// Errors: `count` is 0, `values` holds fewer than count * L * N words, or `queue`
    /// is on another device.
    pub fn ntt_negacyclic_harvey(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Forward,
            true,
        )
    }

    /// As `ntt_negacyclic_harvey`, but the output stays in [0, 4q): SEAL's
    /// `ntt_negacyclic_harvey_lazy`, word for word.
    pub fn ntt_negacyclic_harvey_lazy(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Forward,
            false,
        )
    }

    /// Inverse NTT (with the factor N^-1) of the first `count` polynomials in `values`.
    /// On entry values in [0, 2q), bit-reversed; on exit coefficients in [0, q), standard
    /// order: SEAL's `inverse_ntt_negacyclic_harvey` on every residue. Errors as
    /// `ntt_negacyclic_harvey`.
    pub fn inverse_ntt_negacyclic_harvey(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Inverse,
            true,
        )
    }

    /// As `inverse_ntt_negacyclic_harvey`, but the output stays in [0, 2q): SEAL's
    /// `inverse_ntt_negacyclic_harvey_lazy`, word for word.
    pub fn inverse_ntt_negacyclic_harvey_lazy(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Inverse,
            false,
        )
    }

    /// The general form of the four transforms above: `count` polynomials of `primes`
    /// residues each, residue j under the plan's prime j, so one plan over a modulus chain
    /// serves every level that is a prefix of it (CKKS drops primes from the end). With
    /// `reduce` the output is fully reduced, else lazy ([0, 4q) forward, [0, 2q) inverse).
    ///
    /// Errors: as `ntt_negacyclic_harvey`, and `primes` is 0 or more than the plan's L.
    pub fn transform(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<Vec<Event>> {
        self.enqueue(queue, values, count, primes, direction, reduce, true)
    }

    /// [`NttPlan::transform`] that creates the kernels' events only when `events` is set
    /// (it returns none otherwise): an event costs the host more than the launch itself
    /// on some drivers (NVIDIA's OpenCL: ~16 us against ~6.6 us, measured 2026-11-23), so
    /// the operations ask for them only when profiling.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
        events: bool,
    ) -> Result<Vec<Event>> {
        self.run(queue, values, count, primes, direction, reduce, events)
    }

    /// Whether [`NttPlan::inverse_first_pass_from`], [`NttPlan::forward_moddown`] and
    /// [`NttPlan::forward_key_switch`] run on this plan (staged plans; the naive strategy
    /// has no fused passes).
    pub fn has_fused_passes(&self) -> bool {
        self.layout.is_some()
    }

    /// The first pass of the inverse transform of `count` polynomials of `primes` residues
    /// read from `src` into `values`: with a one-pass layout the whole inverse, reduced to
    /// [0, q), as a copy followed by [`NttPlan::transform`] would leave it; with two, the
    /// block pass (the first `log_g` rounds, lazy: [0, 2q)), which
    /// [`NttPlan::forward_key_switch`] and [`NttPlan::forward_moddown`] finish. Residue j
    /// of polynomial p is read from residue p * src_stride + src_first + j of src (the
    /// last residue of each polynomial of a ciphertext, a polynomial at an offset). `src`
    /// is unchanged and must not be `values`. One launch.
    ///
    /// Errors: as [`NttPlan::transform`]; a naive plan; `src` is `values` or holds fewer
    /// than ((count - 1) * src_stride + src_first + primes) * N words.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_first_pass_from(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        src: &Buffer<u64>,
        src_stride: usize,
        src_first: usize,
        count: usize,
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        let residues = self.validate(queue, values, count, primes)?;
        const WHAT: &str = "inverse_first_pass_from";
        let src_words = self.extent(WHAT, count, src_stride, src_first + primes)?;
        check_buffers(
            WHAT,
            &[("values", values, 0, true), ("src", src, src_words, false)],
            &[],
        )?;
        let launches = self.launches.lock();
        let fused = fused_passes(&launches, WHAT)?;
        let args = per_call(
            values,
            primes,
            &[
                U32(1),
                Buf(src),
                U32(to_u32(src_stride)?),
                U32(to_u32(src_first)?),
            ],
        );
        let mut out = Vec::new();
        // SAFETY: residue r < residues of values (checked to hold residues * N words) is
        // written, words below N of it; it reads residue (r / primes) * src_stride +
        // src_first + r % primes <= (count - 1) * src_stride + src_first + primes - 1 of
        // src (checked above); tables as in `run`.
        unsafe { launch_with(queue, &fused.inv_gather, &args, residues, events, &mut out) }?;
        Ok(out)
    }

    /// SEAL's `apply_galois_ntt` with `galois_elt` on `count` polynomials of `primes`
    /// residues (the first count * primes residues of `src`, in NTT form) into `permuted`,
    /// fused with the first pass of the last polynomial's inverse transform into `values`
    /// (its `primes` residues, as [`NttPlan::inverse_first_pass_from`] leaves them): a
    /// rotation's permutation and its key switching's first pass in one launch, in place
    /// of `ckks_galois_ntt` followed by `inverse_first_pass_from`. `src` is unchanged.
    ///
    /// Errors: a naive plan; `count` or `primes` 0 or too large; `galois_elt` even or not
    /// below 2N; a buffer shorter than the words it is read or written at; `src`,
    /// `values` and `permuted` not three distinct buffers.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_first_pass_galois(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        src: &Buffer<u64>,
        permuted: &Buffer<u64>,
        galois_elt: u32,
        count: usize,
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "inverse_first_pass_galois";
        check_galois_elt(WHAT, galois_elt, self.coeff_count())?;
        // The launch covers every polynomial's residues; values gets the last one's.
        let residues = self.validate(queue, src, count, primes)?;
        let words = self.extent(WHAT, count, primes, 0)?;
        check_buffers(
            WHAT,
            &[
                ("values", values, self.extent(WHAT, 1, primes, 0)?, true),
                ("src", src, words, false),
                ("permuted", permuted, words, true),
            ],
            &[],
        )?;
        let launches = self.launches.lock();
        let fused = fused_passes(&launches, WHAT)?;
        let args = per_call(
            values,
            primes,
            &[
                U32(1),
                Buf(src),
                U32(galois_elt),
                Buf(permuted),
                U32(to_u32(residues - primes)?),
            ],
        );
        let mut out = Vec::new();
        // SAFETY: work groups of residue r < residues read words below N of residue r of
        // src and write the same words of residue r of permuted (both checked to hold
        // residues * N words); those of r >= residues - primes also write residue
        // r - (residues - primes) < primes of values (checked to hold primes * N words),
        // words below N; the three buffers are distinct (checked); tables as in `run`.
        unsafe { launch_with(queue, &fused.inv_galois, &args, residues, events, &mut out) }?;
        Ok(out)
    }

    /// The rest of the last residues' inverse transform, then the mod-down's forward
    /// transforms with its element-wise steps fused into their first loads and last stores
    /// (see [`ModDown`]): one launch with a one-pass layout, two otherwise (the first
    /// finishes the inverse and runs the forward transforms' first passes). The unfused
    /// equivalent is the inverse's last pass, `ckks_moddown_prep`, the lazy forward
    /// transform and `ckks_divide_round_finish`.
    ///
    /// Errors: a naive plan; `count` or `primes` is 0; `primes` or `last_prime` outside
    /// the plan; a stride below `primes`; a buffer shorter than the words it is read or
    /// written at; dst is src with different strides, or dst, scratch, last or inv alias
    /// where one of them is written.
    pub fn forward_moddown(&self, queue: &Queue, md: &ModDown, events: bool) -> Result<Vec<Event>> {
        let l = self.moduli.len();
        if md.primes == 0 || md.primes > l || md.last_prime >= l {
            return Err(Error::invalid(format!(
                "forward_moddown: {} primes and last prime {} in a plan of {l}",
                md.primes, md.last_prime
            )));
        }
        const WHAT: &str = "forward_moddown";
        if md.count == 0 || md.acc_polys > md.count {
            return Err(Error::invalid(format!(
                "forward_moddown: {} polynomials, {} of them added to",
                md.count, md.acc_polys
            )));
        }
        self.check_queue(queue)?;
        for (what, stride) in [("dst_stride", md.dst_stride), ("src_stride", md.src_stride)] {
            if stride < md.primes {
                return Err(Error::invalid(format!(
                    "forward_moddown: {what} = {stride} is below {} primes",
                    md.primes
                )));
            }
        }
        if same_buffer(md.dst, md.src) && md.dst_stride != md.src_stride {
            return Err(Error::invalid(
                "forward_moddown: dst is src with different strides",
            ));
        }
        let residues = md
            .count
            .checked_mul(md.primes)
            .filter(|&r| r <= u32::MAX as usize)
            .ok_or_else(|| Error::invalid("forward_moddown: too many residues"))?;
        // With one pass the scratch is not touched.
        let two_pass = self.launches_per_transform() == 2;
        let scratch_words = if two_pass {
            self.extent(WHAT, residues, 1, 1)?
        } else {
            0
        };
        check_buffers(
            WHAT,
            &[
                ("last", md.last, self.extent(WHAT, md.count, 1, 1)?, false),
                (
                    "dst",
                    md.dst,
                    self.extent(WHAT, md.count, md.dst_stride, md.primes)?,
                    true,
                ),
                (
                    "src",
                    md.src,
                    self.extent(WHAT, md.count, md.src_stride, md.primes)?,
                    false,
                ),
                ("inv", md.inv, 2 * md.primes, false),
                ("scratch", md.scratch, scratch_words, two_pass),
                (
                    "acc",
                    md.acc,
                    self.extent(WHAT, md.acc_polys, md.dst_stride, md.primes)?,
                    false,
                ),
            ],
            // Each work item reads its src and acc words before writing the same dst word.
            &[("dst", "src"), ("dst", "acc")],
        )?;
        let launches = self.launches.lock();
        let fused = fused_passes(&launches, WHAT)?;
        let last = [Buf(md.last), U32(md.last_prime as u32)];
        let mut out = Vec::new();
        if let Some(strided) = &fused.inv_fwd_strided {
            let (outs, chunks) = fused.fan_out(strided, md.count, md.primes);
            let args = per_call(
                md.scratch,
                md.primes,
                &[
                    Buf(md.last),
                    U32(LOAD_MODDOWN),
                    U32(md.last_prime as u32),
                    U32(outs),
                    U32(chunks),
                ],
            );
            // SAFETY: group (r, chunk) reads residue r < count of last (checked) and
            // writes residues r * primes + o, o < primes, of scratch (checked to hold
            // count * primes * N words); primes o and last_prime below the plan's L
            // (checked); tables as in `run`.
            unsafe {
                launch_with(
                    queue,
                    strided,
                    &args,
                    md.count * chunks as usize,
                    events,
                    &mut out,
                )
            }?;
        }
        let finish = [
            Buf(md.dst),
            U32(to_u32(md.dst_stride)?),
            Buf(md.src),
            U32(to_u32(md.src_stride)?),
            Buf(md.inv),
            Buf(md.acc),
            U32(md.acc_polys as u32),
        ];
        let args = per_call(md.scratch, md.primes, &[&last[..], &finish[..]].concat());
        // SAFETY: residue r = p * primes + i (p < count, i < primes) reads residue r of
        // scratch (two passes) or p of last (one pass), residue p * stride + i <=
        // (count - 1) * stride + primes - 1 of src and dst, inv pair i < primes (all
        // checked); tables as in `run`.
        unsafe {
            launch_with(
                queue,
                &fused.moddown_block,
                &args,
                residues,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }

    /// Key switching's forward transforms with the decomposition fused into their loads
    /// and the inner product with the key into the last pass (see [`KeySwitch`]): one
    /// launch with a one-pass layout, two otherwise (the first finishes the target's
    /// inverse); the decomposed residues in NTT form are never stored, and the last pass
    /// also runs the first pass of the special prime's inverse for the mod-down.
    ///
    /// Errors: a naive plan; K = 0 or K + 1 above the plan's primes; a key shape that does
    /// not fit (K or the special index beyond key_stride_primes); a buffer shorter than
    /// the words read or written; an output aliasing another buffer.
    pub fn forward_key_switch(
        &self,
        queue: &Queue,
        ks: &KeySwitch,
        events: bool,
    ) -> Result<Vec<Event>> {
        let k = ks.k;
        if k == 0 || k + 1 > self.moduli.len() {
            return Err(Error::invalid(format!(
                "forward_key_switch: K = {k} needs K + 1 primes; the plan has {}",
                self.moduli.len()
            )));
        }
        if k > ks.key_stride_primes || ks.key_special_index >= ks.key_stride_primes {
            return Err(Error::invalid(format!(
                "forward_key_switch: K = {k} and special index {} do not fit a key of {} primes",
                ks.key_special_index, ks.key_stride_primes
            )));
        }
        if ks.reduce_every == 0 {
            return Err(Error::invalid("forward_key_switch: reduce_every is 0"));
        }
        const WHAT: &str = "forward_key_switch";
        self.check_queue(queue)?;
        // With one pass the scratch is not touched.
        let two_pass = self.launches_per_transform() == 2;
        let residues = |count: usize, stride: usize| self.extent(WHAT, count, stride, 0);
        let scratch_words = if two_pass { residues(k, k + 1)? } else { 0 };
        check_buffers(
            WHAT,
            &[
                ("t_target", ks.t_target, residues(1, k)?, false),
                (
                    "target",
                    ks.target,
                    residues(1, ks.target_first + k)?,
                    false,
                ),
                ("key", ks.key, residues(2 * k, ks.key_stride_primes)?, false),
                ("prod", ks.prod, residues(2, k)?, true),
                ("last", ks.last, residues(1, 2)?, true),
                ("scratch", ks.scratch, scratch_words, two_pass),
            ],
            &[],
        )?;
        let launches = self.launches.lock();
        let fused = fused_passes(&launches, WHAT)?;
        let values = if two_pass { ks.scratch } else { ks.t_target };
        let mut out = Vec::new();
        if let Some(strided) = &fused.ks_inv_fwd_strided {
            let (outs, chunks) = fused.fan_out(strided, k, k + 1);
            let args = per_call(
                values,
                k + 1,
                &[
                    Buf(ks.t_target),
                    U32(LOAD_DECOMPOSE),
                    U32(0),
                    U32(outs),
                    U32(chunks),
                ],
            );
            // SAFETY: group (J, chunk) reads residue J < K of t_target (checked) and
            // writes residues J (K + 1) + I, I < K + 1, of scratch (checked to hold
            // K (K + 1) residues); primes I, J < K + 1 of the plan (checked); tables as
            // in `run`.
            unsafe { launch_with(queue, strided, &args, k * chunks as usize, events, &mut out) }?;
        }
        let args = per_call(
            values,
            k + 1,
            &[
                Buf(ks.t_target),
                Buf(ks.target),
                U32(to_u32(ks.target_first)?),
                Buf(ks.key),
                U32(to_u32(ks.key_stride_primes)?),
                U32(ks.key_special_index as u32),
                U32(ks.reduce_every),
                Buf(ks.prod),
                Buf(ks.last),
            ],
        );
        // SAFETY: row I < K + 1 of block group g (rows past K touch only the last
        // prime's tables and their own local memory) reads residues J (K + 1) + I <
        // K (K + 1) of scratch (two passes) or J < K of t_target (one pass), target residue
        // target_first + J < target_first + K, key residue (2 J + c) * stride + kp <
        // 2 K stride (kp < stride), and writes prod residue c K + I < 2 K or last
        // residue c < 2 (all checked); tables as in `run`.
        let groups_of_rows = (k + 1).div_ceil(fused.ks_rows);
        unsafe {
            launch_with(
                queue,
                &fused.ks_block,
                &args,
                groups_of_rows,
                events,
                &mut out,
            )
        }?;
        Ok(out)
    }

    fn check_queue(&self, queue: &Queue) -> Result<()> {
        if cl::queue_device(queue)? != self.ctx.device() {
            return Err(Error::invalid(
                "queue is on another device than the NTT plan",
            ));
        }
        Ok(())
    }

    /// Words up to the end of residue `(count - 1) * stride + last` (exclusive): the
    /// extent of `count` polynomials `stride` residues apart, each touching residues below
    /// `last`; `count * stride * N` with `last` = 0; 0 for no polynomials. An error names
    /// `what` on overflow.
    fn extent(&self, what: &str, count: usize, stride: usize, last: usize) -> Result<usize> {
        let residues = if count == 0 {
            Some(0)
        } else if last == 0 {
            count.checked_mul(stride)
        } else {
            count
                .checked_sub(1)
                .and_then(|c| c.checked_mul(stride))
                .and_then(|r| r.checked_add(last))
        };
        residues
            .and_then(|r| r.checked_mul(self.coeff_count()))
            .ok_or_else(|| Error::invalid(format!("{what}: sizes overflow")))
    }

    /// Checks the arguments (every transform's and fused pass's: the kernels read the
    /// tables of primes below `primes`); returns the number of residues (count * primes).
    fn validate(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
    ) -> Result<usize> {
        if count == 0 {
            return Err(Error::invalid("NTT of zero polynomials"));
        }
        if primes == 0 || primes > self.moduli.len() {
            return Err(Error::invalid(format!(
                "NTT over {primes} primes; the plan has {}",
                self.moduli.len()
            )));
        }
        self.check_queue(queue)?;
        let residues = count
            .checked_mul(primes)
            .filter(|&r| r <= u32::MAX as usize)
            .ok_or_else(|| Error::invalid("more than 2^32 - 1 residue polynomials"))?;
        let words = residues
            .checked_mul(self.coeff_count())
            .ok_or_else(|| Error::invalid("polynomial count overflows"))?;
        if values.len() < words {
            return Err(Error::invalid(format!(
                "buffer holds {} words; {count} polynomials of {primes} residues of N = {} need {words}",
                values.len(),
                self.coeff_count()
            )));
        }
        Ok(residues)
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
        want_events: bool,
    ) -> Result<Vec<Event>> {
        let residues = self.validate(queue, values, count, primes)?;
        let launches = self.launches.lock();
        let launches = match direction {
            NttDirection::Forward => &launches.forward,
            NttDirection::Inverse => &launches.inverse,
        };
        let mut events = Vec::with_capacity(if want_events { launches.len() } else { 0 });
        for launch in launches {
            // SAFETY: validate() checked values.len() >= residues * N.
            unsafe {
                launch_plain(
                    queue,
                    launch,
                    values,
                    primes,
                    reduce,
                    residues,
                    want_events,
                    &mut events,
                )
            }?;
        }
        Ok(events)
    }
}

/// The per-call arguments of an NTT kernel: the values, the primes per polynomial, then
/// the kernel's own arguments in order.
fn per_call<'a>(
    values: &'a Buffer<u64>,
    primes: usize,
    own: &[cl::KernelArg<'a>],
) -> Vec<(u32, cl::KernelArg<'a>)> {
    let shared = [(VALUES_ARG, Buf(values)), (PRIMES_ARG, U32(primes as u32))];
    shared
        .into_iter()
        .chain((OWN_ARGS..).zip(own.iter().copied()))
        .collect()
}

/// A galois element SEAL's `apply_galois_ntt` takes at degree `n`: odd and below 2N; an
/// error naming `what` otherwise.
pub fn check_galois_elt(what: &str, galois_elt: u32, n: usize) -> Result<()> {
    if galois_elt.is_multiple_of(2) || galois_elt as usize >= 2 * n {
        return Err(Error::invalid(format!(
            "{what}: galois element {galois_elt} is not odd and below 2N = {}",
            2 * n
        )));
    }
    Ok(())
}

/// Checks the buffers of a fused launch, each (name, buffer, words touched, written):
/// every buffer holds its words, and no written buffer is another of the list, but for
/// the pairs `may_alias` (written, read) whose kernel reads each word before writing it.
fn check_buffers(
    what: &str,
    buffers: &[(&str, &Buffer<u64>, usize, bool)],
    may_alias: &[(&str, &str)],
) -> Result<()> {
    for &(name, buf, need, _) in buffers {
        if buf.len() < need {
            return Err(Error::invalid(format!(
                "{what}: {name} holds {} words; {need} are touched",
                buf.len()
            )));
        }
    }
    for &(name, written, _, is_written) in buffers {
        for &(other, buf, _, _) in buffers {
            if is_written
                && name != other
                && !may_alias.contains(&(name, other))
                && same_buffer(written, buf)
            {
                return Err(Error::invalid(format!(
                    "{what}: {name} must not be {other}"
                )));
            }
        }
    }
    Ok(())
}

/// A staged plan's fused passes, or an error naming `what` for a naive plan.
fn fused_passes<'l>(launches: &'l Launches, what: &str) -> Result<&'l FusedPasses> {
    launches
        .fused
        .as_ref()
        .ok_or_else(|| Error::invalid(format!("{what} needs a staged NTT plan")))
}

impl FusedPasses {
    /// The fan-out of `launch` (an `ntt_inv_fwd_strided`) over `residues` input residues
    /// and `primes` output primes (see [`fan_out`]).
    fn fan_out(&self, launch: &Launch, residues: usize, primes: usize) -> (u32, u32) {
        let groups = residues * launch.items_per_residue / launch.work_group.unwrap_or(1);
        fan_out(self.fan_out, groups, self.compute_units, primes)
    }
}

/// The fan-out of an `ntt_inv_fwd_strided` launch of `groups` work groups per chunk over
/// `primes` output primes: (outputs per work group, chunks of them), the chunks as even as
/// the fan-out allows. `fixed` outputs per group where the variant sets them (non-zero);
/// else the fewest chunks that give at least `FAN_OUT_GROUPS_PER_UNIT` work groups per
/// compute unit. Measured on an H100, 2026-11-24 (K = 8, N = 2^15, 2^16; fan-outs 2, 3, 9
/// in three interleaved rounds, `benches/results/h100-2026-11-24-fan-out/`): key
/// switching's 512 groups were fastest in one chunk (32.5 against 36.9 us at 2^15, 61.1
/// against 79.4 at 2^16 for chunks of 2 outputs), the mod-down's 128 in four (13.7 against
/// 27.7 us in one).
fn fan_out(fixed: usize, groups: usize, compute_units: usize, primes: usize) -> (u32, u32) {
    let chunks = if fixed == 0 {
        (FAN_OUT_GROUPS_PER_UNIT * compute_units).div_ceil(groups.max(1))
    } else {
        primes.div_ceil(fixed)
    }
    .clamp(1, primes.max(1));
    let outs = primes.div_ceil(chunks);
    (outs as u32, primes.div_ceil(outs) as u32)
}

fn to_u32(v: usize) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::invalid(format!("{v} does not fit a 32-bit kernel argument")))
}

/// Enqueues one pass of a plain transform in place on `values`.
///
/// # Safety
/// `values` holds at least `residues` * N words and `primes` is at most the plan's L.
#[allow(clippy::too_many_arguments)]
unsafe fn launch_plain(
    queue: &Queue,
    launch: &Launch,
    values: &Buffer<u64>,
    primes: usize,
    reduce: bool,
    residues: usize,
    want_event: bool,
    events: &mut Vec<Event>,
) -> Result<()> {
    let reduce = [U32(reduce as u32)];
    let own: &[cl::KernelArg] = if launch.takes_reduce { &reduce } else { &[] };
    let args = per_call(values, primes, own);
    // SAFETY: each work item (or work group of the required size, for staged kernels)
    // serves residue `item / items_per_residue` < residues and touches words below N of
    // it (the caller's contract); the root tables hold L * N pairs, indexed by prime =
    // residue % primes < L and root index < N, and params L * PARAMS_STRIDE words.
    unsafe { launch_with(queue, launch, &args, residues, want_event, events) }
}

/// Sets `args` (index, value) of `launch`'s kernel and enqueues it over `residues`
/// residues; pushes its event when `want_event`.
///
/// # Safety
/// `args` set every per-call argument of the kernel with the types ntt.cl declares (the
/// tables were set when the kernel was built and stay alive with it), the caller holds
/// the plan's lock, and every index the kernel computes from `residues` and `args` lies
/// inside the buffer it indexes.
unsafe fn launch_with(
    queue: &Queue,
    launch: &Launch,
    args: &[(u32, cl::KernelArg)],
    residues: usize,
    want_event: bool,
    events: &mut Vec<Event>,
) -> Result<()> {
    for &(index, arg) in args {
        // SAFETY: the caller's contract: the kernel declares this type at `index`.
        unsafe { cl::set_arg_raw(&launch.kernel, index, arg) }?;
    }
    let mut event = want_event.then(Event::empty);
    // SAFETY: the caller's contract (every index in range).
    unsafe {
        cl::enqueue_on(
            queue,
            &launch.kernel,
            residues * launch.items_per_residue,
            launch.work_group.map(SpatialDims::from),
            event.as_mut(),
        )
    }?;
    events.extend(event);
    Ok(())
}

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttDirection {
    /// SEAL's `ntt_negacyclic_harvey`: coefficients to bit-reversed evaluations.
    Forward,
    /// SEAL's `inverse_ntt_negacyclic_harvey`: back, with the factor N^-1.
    Inverse,
}

fn check_coeff_count_power(coeff_count_power: u32) -> Result<()> {
    if !(DEVICE_COEFF_COUNT_POWER_MIN..=DEVICE_COEFF_COUNT_POWER_MAX).contains(&coeff_count_power) {
        return Err(Error::invalid(format!(
            "device NTT supports N = 2^{DEVICE_COEFF_COUNT_POWER_MIN} .. \
             2^{DEVICE_COEFF_COUNT_POWER_MAX}, not 2^{coeff_count_power}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_for_48k_local_memory() {
        let r8: StagedVariant = "r8g11c4".parse().unwrap();
        let r16: StagedVariant = "r16g11c4".parse().unwrap();
        let r16g12c5: StagedVariant = "r16g12c5".parse().unwrap();
        let d = StagedVariant::DEFAULT;
        // (variant, log N) -> (log S, log C, log B, block items, strided items)
        let want = [
            // One pass: 8 values per item (512 items at 2^12), not the default's 4.
            (d, 10, 0, 0, 0, 128, 0),
            (d, 12, 0, 0, 0, 512, 0),
            (d, 13, 6, 2, 1, 64, 64),
            (d, 15, 7, 2, 0, 64, 128),
            (d, 16, 8, 2, 0, 64, 256),
            (d, 17, 8, 2, 0, 128, 256),
            (r8, 10, 0, 0, 0, 128, 0),
            (r8, 12, 0, 0, 0, 512, 0),
            (r8, 13, 6, 5, 4, 256, 256),
            (r8, 16, 8, 4, 3, 256, 512),
            (r8, 17, 8, 4, 2, 256, 512),
            (r16, 10, 0, 0, 0, 64, 0),
            (r16, 12, 0, 0, 0, 256, 0),
            (r16, 13, 6, 5, 4, 128, 128),
            (r16, 16, 8, 4, 3, 128, 256),
            (r16, 17, 8, 4, 2, 128, 256),
            // Columns capped by the 2^12 words a group holds.
            (r16g12c5, 16, 8, 4, 4, 256, 256),
        ];
        for (variant, log_n, log_s, log_c, log_b, block, strided) in want {
            let l = StagedLayout::new(log_n, 48 * 1024, 1024, variant).unwrap();
            assert_eq!(
                (l.log_s(), l.log_c(), l.log_b()),
                (log_s, log_c, log_b),
                "{variant} 2^{log_n}"
            );
            let log_r = if log_s == 0 {
                variant.log_regs().max(3)
            } else {
                variant.log_regs()
            };
            assert_eq!(l.log_r(), log_r, "{variant} 2^{log_n}");
            assert_eq!(l.log_g() + l.log_s(), log_n);
            assert_eq!(l.block_work_group_size(), block);
            assert!(l.block_local_bytes() <= 48 * 1024);
            if log_s == 0 {
                assert_eq!((l.launches(), l.strided_work_group_size()), (1, None));
            } else {
                assert_eq!(l.launches(), 2);
                assert_eq!(l.strided_work_group_size(), Some(strided));
                assert!(l.strided_local_bytes().unwrap() <= 48 * 1024);
            }
        }
        // Work groups of 256 at most: smaller groups, still two passes at 2^17.
        let l = StagedLayout::new(17, 48 * 1024, 256, StagedVariant::DEFAULT).unwrap();
        assert!(l.block_work_group_size() <= 256 && l.strided_work_group_size() <= Some(256));
        assert!(StagedLayout::new(17, 1024, 256, StagedVariant::DEFAULT).is_err());
    }

    #[test]
    fn key_switching_rows_fit_work_groups_and_local_memory() {
        let info = |local_mem_bytes: u64, max_work_group_size: usize| cl::DeviceInfoSummary {
            name: String::new(),
            vendor: String::new(),
            platform: String::new(),
            is_gpu: true,
            local_mem_bytes,
            max_work_group_size,
            compute_units: 132,
            max_alloc_bytes: 0,
            global_mem_bytes: 0,
            base_addr_align_bytes: 512,
        };
        let h100 = info(48 * 1024, 1024);
        let default = StagedLayout::new(15, 48 * 1024, 1024, StagedVariant::DEFAULT).unwrap();
        // The default at 2^15: blocks of 2^8 words, 64 items of 4 values a row, two rows.
        let (one, rows) = ks_rows_that_fit(default, 2, &h100).unwrap();
        assert_eq!((one.log_b(), one.block_work_group_size(), rows), (0, 64, 2));
        let r8: StagedVariant = "r8g11c4".parse().unwrap();
        let layout = |log_n| StagedLayout::new(log_n, 48 * 1024, 1024, r8);
        // 8 values at 2^15: 32 items a row: 9 rows of 288 items, 20.7 KB.
        let (one, rows) = ks_rows_that_fit(layout(15).unwrap(), 9, &h100).unwrap();
        assert_eq!((one.log_b(), one.block_work_group_size(), rows), (0, 32, 9));
        // 2^16: also blocks of 2^8 words; 16 rows are 512 items and 36 KB.
        assert_eq!(
            ks_rows_that_fit(layout(16).unwrap(), 16, &h100).unwrap().1,
            16
        );
        // 8 KB of local memory holds three rows of 2304 bytes.
        let small = info(8 * 1024, 1024);
        assert_eq!(
            ks_rows_that_fit(layout(15).unwrap(), 9, &small).unwrap().1,
            3
        );
        // 2^12 in one pass: a row is 512 items and 36 KB, so one: the layout's own.
        assert!(ks_rows_that_fit(layout(12).unwrap(), 9, &h100).is_none());
        assert!(ks_rows_that_fit(layout(15).unwrap(), 1, &h100).is_none());
        // Work groups of at most 64 items: two rows of 32.
        assert_eq!(
            ks_rows_that_fit(layout(15).unwrap(), 9, &info(1 << 20, 64))
                .unwrap()
                .1,
            2
        );
    }

    #[test]
    fn plans_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<NttPlan>();
    }

    #[test]
    fn strategy_names() {
        assert_eq!("naive".parse::<NttStrategy>().unwrap(), NttStrategy::Naive);
        assert_eq!(
            " Staged ".parse::<NttStrategy>().unwrap(),
            NttStrategy::STAGED
        );
        assert!("radix4".parse::<NttStrategy>().is_err());
        assert_eq!(NttStrategy::STAGED.to_string(), "staged");
        let r16 = NttStrategy::Staged("r16".parse().unwrap());
        assert_eq!(r16.to_string(), "staged(r16g8c2k4p2o0)");
    }

    #[test]
    fn fan_outs() {
        // An H100's 132 SMs: key switching at 2^15 (K = 8: 512 groups, 9 primes) in one
        // chunk, its mod-down (2 residues: 128 groups, 8 primes) in four; 2^14 (K = 7: 224
        // groups) in two.
        assert_eq!(fan_out(0, 512, 132, 9), (9, 1));
        assert_eq!(fan_out(0, 128, 132, 8), (2, 4));
        assert_eq!(fan_out(0, 224, 132, 8), (4, 2));
        // Never more chunks than primes, never an empty chunk.
        assert_eq!(fan_out(0, 1, 132, 3), (1, 3));
        assert_eq!(fan_out(0, 10_000, 132, 1), (1, 1));
        // A variant's own fan-out: chunks as even as it allows.
        assert_eq!(fan_out(3, 512, 132, 9), (3, 3));
        assert_eq!(fan_out(2, 512, 132, 9), (2, 5));
        assert_eq!(fan_out(4, 512, 132, 9), (3, 3));
        assert_eq!(fan_out(64, 1, 132, 9), (9, 1));
    }

    #[test]
    fn variant_names() {
        let parse = |s: &str| s.parse::<StagedVariant>();
        assert_eq!(parse("").unwrap(), StagedVariant::DEFAULT);
        assert_eq!(parse(" R4G8C2 ").unwrap(), StagedVariant::DEFAULT);
        assert_eq!(parse("k4p2").unwrap(), StagedVariant::DEFAULT);
        assert_eq!(parse("k4p2o0").unwrap(), StagedVariant::DEFAULT);
        assert_eq!(StagedVariant::DEFAULT.to_string(), "r4g8c2k4p2o0");
        assert_eq!(parse("k16").unwrap().to_string(), "r4g8c2k16p2o0");
        assert_eq!(
            StagedVariant::new(4, 10, 6).unwrap().to_string(),
            "r16g10c6k4p2o0"
        );
        let v = parse("c5r16k8").unwrap();
        assert_eq!(
            (
                v.log_regs(),
                v.log_group_words(),
                v.min_log_columns(),
                v.ks_log_regs()
            ),
            (4, 8, 5, 3)
        );
        assert_eq!(v.to_string(), "r16g8c5k8p2o0");
        assert_eq!(parse(&v.to_string()).unwrap(), v);
        let p9 = parse("p9k16").unwrap();
        assert_eq!((p9.ks_rows(), p9.ks_log_regs()), (9, 4));
        assert_eq!(p9.to_string(), "r4g8c2k16p9o0");
        let o9 = parse("o9").unwrap();
        assert_eq!(
            (o9.fan_out(), o9.to_string()),
            (9, "r4g8c2k4p2o9".to_string())
        );
        for bad in [
            "r2",
            "r32",
            "g5",
            "g13",
            "c9",
            "r",
            "x8",
            "r16r16",
            "g1x",
            "r99999999999",
            "é",
            "r16,g11",
            "k2",
            "k32",
            "k8k8",
            "p0",
            "p17",
            "p",
            "o65",
            "o2o2",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.to_string().contains("variant"), "{bad}: {e}");
        }
        assert!(StagedVariant::new(4, 12, 8).is_ok());
        assert!(StagedVariant::new(5, 11, 4).is_err());
    }
}
