//! The staged transform's knobs and layout: which kernels run a transform
//! ([`NttStrategy`]), the knobs of the staged kernels ([`StagedVariant`], picked when a plan
//! is built) and how a staged transform of N points splits into passes on a device
//! ([`StagedLayout`]).
//!
//! Both parse from text (`naive` | `staged`; a variant such as `r16` or `r8g12c5`), so that
//! settings can name them and whole routines can be measured per variant.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The largest sub-transform a staged work group holds: 2^12 words, 32 KiB (36 KiB with
/// the block kernels' padding), which fits the 48 KiB of local memory NVIDIA's OpenCL
/// gives a work group, and 512 work items of 8 values (256 of 16).
const MAX_LOG_GROUP_WORDS: u32 = 12;
/// The smallest work group the layout considers: 2^6 words.
const MIN_LOG_GROUP_WORDS: u32 = 6;

/// The most rows per work group of a row block pass a variant may ask for.
const MAX_ROWS: u32 = 16;
/// The most columns per strided work group a variant may ask for at least: 2^8 words =
/// 2 KiB per row read.
const MAX_MIN_LOG_COLUMNS: u32 = 8;
/// The most output primes per work group of an inverse pass fused with forward passes a
/// variant may ask for (SEAL's largest modulus has 64 primes).
const MAX_FAN_OUT: u32 = 64;

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
}

impl FromStr for NttStrategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "naive" => Ok(NttStrategy::Naive),
            "staged" => Ok(NttStrategy::STAGED),
            _ => Err(Error::invalid(format!(
                "NTT strategy {s:?} is not `naive` or `staged`"
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
/// Besides the plain transforms' knobs, two concern passes that callers build on the
/// plan's tables (`NttPlan::build_program`): the row passes, whose block pass holds
/// several rows (transforms of the same blocks under different primes) per work group
/// and whose strided pass is an inverse fused with forward passes; and the fan-out of
/// those fused inverse passes.
///
/// Written `r<R>g<log words>c<log columns>k<R of the row passes>p<rows per work
/// group>o<fan-out>`, each part optional and the default's where left out:
/// `r4g8c2k4p2o0` (the default; `o0`: the fan-out chosen per launch), `r8g11c4k8p1`,
/// `r16`, `r16g12c5`, `k16p1`, `o9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StagedVariant {
    log_regs: u32,
    log_group_words: u32,
    min_log_columns: u32,
    /// log2 of the values per work item in the row passes (at least 8 values in a
    /// one-pass layout: see `StagedLayout::new`).
    row_log_regs: u32,
    /// Rows (output primes) per work group of the row block pass; with more than one, a
    /// row holds one block.
    rows: u32,
    /// Output primes per work group of an inverse pass fused with forward passes; 0:
    /// chosen per launch.
    fan_out: u32,
}

impl StagedVariant {
    /// 4 values per work item (8 where the transform takes one pass: see
    /// `StagedLayout::new`), work groups of 2^8 words where the layout has the choice (64
    /// work items), strided work groups of at least 4 columns; in the row passes 4 values
    /// per work item and block work groups of two one-block rows. Small work items let
    /// the row block pass, whose items also hold 128-bit accumulators, keep all its rows
    /// on the device in one round; small groups spread the small batches of a routine's
    /// transforms over more of the device (REPORT.md in benches/results holds the runs).
    pub const DEFAULT: StagedVariant = StagedVariant {
        log_regs: 2,
        log_group_words: 8,
        min_log_columns: 2,
        row_log_regs: 2,
        rows: 2,
        fan_out: 0,
    };
    /// steps), work groups of 2^`log_group_words` words where the layout has the choice
    /// (6 ..= 12; larger groups than the device holds are capped when a plan is built),
    /// and at least 2^`min_log_columns` columns per strided work group (0 ..= 8); the row
    /// passes' knobs as the default's.
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
            row_log_regs: StagedVariant::DEFAULT.row_log_regs,
            rows: StagedVariant::DEFAULT.rows,
            fan_out: StagedVariant::DEFAULT.fan_out,
        })
    }

    /// The same variant with 2^`log_regs` values per work item in the row passes (2, 3 or
    /// 4: radix-4, 8 or 16 steps; at least 8 in a one-pass layout, and the plan's own
    /// layout where the device cannot hold this one with as many passes).
    ///
    /// Errors: `log_regs` is not 2, 3 or 4.
    pub fn with_row_log_regs(mut self, log_regs: u32) -> Result<Self> {
        if !(2..=4).contains(&log_regs) {
            return Err(Error::invalid(format!(
                "staged NTT variant: 2^{log_regs} values per work item in the row passes \
                 (2^2, 2^3 or 2^4)"
            )));
        }
        self.row_log_regs = log_regs;
        Ok(self)
    }

    /// The same variant with `rows` rows (output primes) per work group of the row block
    /// pass, 1 ..= 16, each a block of its own (a caller holds fewer where the device's
    /// work groups or the kernel's registers do not allow them).
    ///
    /// Errors: `rows` out of range.
    pub fn with_rows(mut self, rows: u32) -> Result<Self> {
        if !(1..=MAX_ROWS).contains(&rows) {
            return Err(Error::invalid(format!(
                "staged NTT variant: {rows} rows per work group (1 ..= {MAX_ROWS})"
            )));
        }
        self.rows = rows;
        Ok(self)
    }

    /// Rows (output primes) per work group of the row block pass.
    pub fn rows(&self) -> u32 {
        self.rows
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

    /// log2 of the values each work item of the row passes holds.
    pub fn row_log_regs(&self) -> u32 {
        self.row_log_regs
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
        while let Some(part) = rest.chars().next() {
            let tail = &rest[1..];
            let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let value: u32 = tail[..digits]
                .parse()
                .map_err(|_| bad(&format!("`{part}` wants a number")))?;
            let slot = match part {
                'r' => 0,
                'g' => 1,
                'c' => 2,
                'k' => 3,
                'p' => 4,
                'o' => 5,
                _ => return Err(bad(&format!("unknown part `{part}`"))),
            };
            if knobs[slot].replace(value).is_some() {
                return Err(bad(&format!("`{part}` given twice")));
            }
            rest = &tail[digits..];
        }
        let d = StagedVariant::DEFAULT;
        let log_regs_of = |knob: u32, name: char| match knob {
            4 => Ok(2),
            8 => Ok(3),
            16 => Ok(4),
            _ => Err(bad(&format!("{name} is 4, 8 or 16"))),
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
                .with_row_log_regs(log_regs_of(k, 'k')?)
                .map_err(|e| bad(&e.to_string()))?,
        };
        v.with_rows(knobs[4].unwrap_or(d.rows))
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
            1u32 << self.row_log_regs,
            self.rows,
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
            // groups of up to 2^12 words would hold 1024 items.
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

    /// The layout of `variant`'s row passes (its values per work item there) on the same
    /// device, where the device holds it with this layout's split (S, G), else this
    /// layout: a row pass's results are finished by passes of this layout.
    pub fn for_rows(
        self,
        local_mem_bytes: u64,
        max_work_group_size: usize,
        variant: StagedVariant,
    ) -> StagedLayout {
        let rows = StagedVariant {
            log_regs: variant.row_log_regs,
            ..variant
        };
        StagedLayout::new(self.log_n, local_mem_bytes, max_work_group_size, rows)
            .ok()
            .filter(|r| r.log_s == self.log_s)
            .unwrap_or(self)
    }

    /// The same layout with one block per block work group (B = 1).
    pub fn with_one_block(self) -> Self {
        StagedLayout { log_b: 0, ..self }
    }

    /// The same split with as many columns per strided work group as make it the block
    /// work group's size (S C = B G), where a two-pass layout allows that (C <= G): one
    /// work-group size for kernels that run both kinds of pass.
    pub fn with_equal_work_groups(self) -> Option<Self> {
        let log_c = (self.log_b + self.log_g()).checked_sub(self.log_s)?;
        (self.log_s != 0 && log_c <= self.log_g()).then_some(StagedLayout { log_c, ..self })
    }

    /// The build options of the staged kernels (`-D LOG_N=.. -D LOG_R=..` ...).
    pub fn build_options(&self) -> String {
        format!(
            "-D LOG_N={} -D LOG_R={} -D LOG_S={} -D LOG_C={} -D LOG_B={}",
            self.log_n, self.log_r, self.log_s, self.log_c, self.log_b
        )
    }
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
            // Equal work groups: the block groups' size, fewer or more columns.
            match l.with_equal_work_groups() {
                None => assert_eq!(log_s, 0, "{variant} 2^{log_n}"),
                Some(e) => {
                    assert_eq!(e.strided_work_group_size(), Some(block));
                    assert_eq!((e.log_s(), e.log_b(), e.log_r()), (log_s, log_b, log_r));
                    assert!(e.strided_local_bytes().unwrap() <= 48 * 1024);
                }
            }
        }
        // Work groups of 256 at most: smaller groups, still two passes at 2^17.
        let l = StagedLayout::new(17, 48 * 1024, 256, StagedVariant::DEFAULT).unwrap();
        assert!(l.block_work_group_size() <= 256 && l.strided_work_group_size() <= Some(256));
        assert!(StagedLayout::new(17, 1024, 256, StagedVariant::DEFAULT).is_err());
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
                v.row_log_regs()
            ),
            (4, 8, 5, 3)
        );
        assert_eq!(v.to_string(), "r16g8c5k8p2o0");
        assert_eq!(parse(&v.to_string()).unwrap(), v);
        let p9 = parse("p9k16").unwrap();
        assert_eq!((p9.rows(), p9.row_log_regs()), (9, 4));
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
