//! Every setting of the backend in one place.
//!
//! [`Config`] holds them, each with its default ([`Config::default`]); [`SETTINGS`] is
//! the table a user reads (name, default, meaning; docs/SETTINGS.md prints it and a test
//! keeps the two equal). The environment is one way to fill a `Config`:
//! [`env_settings`] is the only function of the library that reads it
//! ([`Config::from_env`] parses what it gives), and
//! [`Config::from_lookup`] parses the same names from any source (C++'s
//! `seal_opencl::Options` arrive that way). A value that does not parse is an
//! `invalid_argument` naming the variable; an empty value is the default.
//!
//! Scopes: `MAX_BYTES` and `MAX_KEY_BYTES` cap each device (tile) separately, so a process
//! on two devices may hold twice each; `MAX_PINNED_BYTES` caps the whole process.
//!
//! The experiment settings ([`Experiment`]) exist for benchmarks and tests that compare
//! variants of the same work (NTT strategy, fused passes, the memory cache, tiles); a user
//! has no reason to change them.

use std::path::PathBuf;

use tracing::Level;

use crate::ckks::context::{EncodeOnDevice, KernelChoices, BATCH_WAVES_MAX};
use crate::ckks::fused::KS_JOBS_MAX;
use crate::cl::DeviceSelector;
use crate::device::{DeviceOptions, DeviceSet, Devices, Partition};
pub use crate::device::{DEFAULT_POISON, DEFAULT_QUEUES};
use crate::error::{Error, Result};
use crate::memcache::{MemcacheConfig, DEFAULT_SLAB_BYTES};
use crate::ntt::{NttStrategy, StagedVariant};
use crate::profiler;
use crate::seal_backend::{Backend, TransparencyCheck};

/// One row of the settings table.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The environment variable (and the name C++'s options pass it under).
    pub name: &'static str,
    /// The default, as the table prints it.
    pub default: &'static str,
    /// For benchmarks and tests only.
    pub experiment: bool,
}

/// Declares each setting as a constant and [`SETTINGS`] as the list of them, in order:
/// `NAME: user|experiment "SEAL_OPENCL_..." = "default as printed";`.
macro_rules! settings {
    ($($name:ident: $kind:ident $var:literal = $default:literal;)*) => {
        $(pub const $name: Setting = Setting {
            name: $var,
            default: $default,
            experiment: settings!(@$kind),
        };)*
        /// Every setting, users' first, in the order of the docs' tables.
        pub const SETTINGS: &[Setting] = &[$($name),*];
    };
    (@user) => { false };
    (@experiment) => { true };
}

settings! {
    DEVICE: user "SEAL_OPENCL_DEVICE" = "first GPU, else first CPU";
    DEVICES: user "SEAL_OPENCL_DEVICES" = "all";
    QUEUES: user "SEAL_OPENCL_QUEUES" = "2";
    MAX_BYTES: user "SEAL_OPENCL_MAX_BYTES" = "the device's memory";
    MAX_KEY_BYTES: user "SEAL_OPENCL_MAX_KEY_BYTES" = "a quarter of the device's memory";
    MAX_PINNED_BYTES: user "SEAL_OPENCL_MAX_PINNED_BYTES" = "a quarter of the host's memory";
    LOG: user "SEAL_OPENCL_LOG" = "warn";
    PROFILE: user "SEAL_OPENCL_PROFILE" = "off";
    CROSSCHECK: user "SEAL_OPENCL_CROSSCHECK" = "0";
    POISON: user "SEAL_OPENCL_POISON" = "0";
    SYNC: user "SEAL_OPENCL_SYNC" = "0";
    CHECK_TRANSPARENT: user "SEAL_OPENCL_CHECK_TRANSPARENT" = "deferred";
    NTT: experiment "SEAL_OPENCL_NTT" = "staged";
    NTT_VARIANT: experiment "SEAL_OPENCL_NTT_VARIANT" = "the tuned variant";
    FUSED: experiment "SEAL_OPENCL_FUSED" = "1";
    CHAIN: experiment "SEAL_OPENCL_CHAIN" = "14";
    CHAIN_GROUPS: experiment "SEAL_OPENCL_CHAIN_GROUPS" = "8";
    DEFER_MULTIPLY: experiment "SEAL_OPENCL_DEFER_MULTIPLY" = "1";
    BATCH_PRODUCTS: experiment "SEAL_OPENCL_BATCH_PRODUCTS" = "4";
    BATCH_ROTATIONS: experiment "SEAL_OPENCL_BATCH_ROTATIONS" = "4";
    BATCH_WAVES: experiment "SEAL_OPENCL_BATCH_WAVES" = "8";
    ENCODE: experiment "SEAL_OPENCL_ENCODE" = "auto";
    BARRETT_DQ: experiment "SEAL_OPENCL_BARRETT_DQ" = "1";
    MEMCACHE: experiment "SEAL_OPENCL_MEMCACHE" = "on";
    TILES: experiment "SEAL_OPENCL_TILES" = "auto";
    ISSUE_THREAD: experiment "SEAL_OPENCL_ISSUE_THREAD" = "on";
    DUMP_PROGRAMS: experiment "SEAL_OPENCL_DUMP_PROGRAMS" = "off";
}

/// Every setting of the backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Which OpenCL device (`gpu` | `cpu` | `P:D`); its platform's devices of that kind
    /// are the candidates.
    pub device: DeviceSelector,
    /// Which of the candidates are used (`all` | `0,1,...`).
    pub devices: DeviceSet,
    /// In-order queues per device (>= 1); each issuing thread gets one, round robin.
    pub queues: usize,
    /// Device memory each device's pool may hold (bytes); beyond it a request fails as if
    /// the device ran out. None: only the device's own limit.
    pub max_bytes: Option<u64>,
    /// Key bytes kept on each device, least recently used evicted first. None: a quarter
    /// of the device's memory.
    pub max_key_bytes: Option<u64>,
    /// Page-locked host bytes for marked objects' words, for the whole process (0: none).
    /// None: a quarter of the host's memory.
    pub max_pinned_bytes: Option<u64>,
    /// The level of the stderr subscriber installed with the backend.
    pub log: Level,
    /// Where the profile is written at exit; None: no profiling.
    pub profile: Option<PathBuf>,
    /// 0: off; N: every N-th routed operation is compared with SEAL's CPU result.
    pub crosscheck: u64,
    /// How SEAL's transparency check of results is answered.
    pub check_transparent: TransparencyCheck,
    /// Fill every pooled buffer handed out with this word (tests).
    pub poison: Option<u64>,
    /// Wait for every kernel right after launching it (finding a failing kernel).
    pub sync: bool,
    pub experiment: Experiment,
}

/// Settings for benchmarks and tests that compare variants of the same work.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// The naive radix-2 transform instead of the staged one.
    pub naive_ntt: bool,
    /// The staged transform's variant (kept when `naive_ntt`, for benchmarks that switch).
    pub variant: StagedVariant,
    /// `false`: the tensor product and the mod-downs run one kernel per step.
    pub fused: bool,
    /// Key switches run as one chained launch at N <= 2^`chain_log_n` (0: never).
    pub chain_log_n: u32,
    /// Work groups per compute unit of a chained launch (0: one per pass group).
    pub chain_groups_per_unit: u32,
    /// A CKKS product waits for what consumes it: a multiply for its relinearization, a
    /// multiply_plain for an add of it (one launch each with it).
    pub defer_multiply: bool,
    /// Relinearizations of deferred multiplies that wait for each other and run in one
    /// chained launch, at most (1 to `KS_JOBS_MAX`; 1: each at once).
    pub batch_products: usize,
    /// Rotations that wait for each other and run in one chained launch, at most (1 to
    /// `KS_JOBS_MAX`; 1: each at once).
    pub batch_rotations: usize,
    /// Waves of batched key switches that wait, at most (1 to `BATCH_WAVES_MAX`; 1: a key
    /// switch whose input is pending runs the batch first).
    pub batch_waves: usize,
    /// How much of CKKSEncoder::encode runs on the device (`auto`, `host`, `ntt`, `fft`).
    pub encode: EncodeOnDevice,
    /// `true` (the default): products of two residues in the CKKS kernels reduce by
    /// Dhem-Quisquater's Barrett (one 64-bit product); `false`: by SEAL's.
    pub barrett_dq: bool,
    /// `false`: every buffer request is a device allocation, every free a release.
    pub memcache: bool,
    /// How devices become tiles.
    pub tiles: Partition,
    /// Compiled programs are written into this directory.
    pub dump_programs: Option<PathBuf>,
    /// Each queue's kernel launches enqueued by a thread of its own.
    pub issue_thread: bool,
}

/// The device layer's defaults are [`DeviceOptions::default`]'s and the CKKS kernels' are
/// [`KernelChoices::default`]'s: the settings they own are taken from there, not written a
/// second time.
impl Default for Config {
    fn default() -> Self {
        let d = DeviceOptions::default();
        let kernels = KernelChoices::default();
        Config {
            device: d.selector,
            devices: d.devices,
            queues: d.queues_per_tile,
            max_bytes: d.memcache.max_bytes_held,
            max_key_bytes: None,
            max_pinned_bytes: None,
            log: crate::logging::DEFAULT_LEVEL,
            profile: None,
            crosscheck: 0,
            check_transparent: TransparencyCheck::default(),
            poison: d.memcache.poison,
            sync: d.sync_each_launch,
            experiment: Experiment {
                naive_ntt: false,
                variant: StagedVariant::DEFAULT,
                fused: kernels.fused,
                chain_log_n: kernels.chain_log_n,
                chain_groups_per_unit: kernels.chain_groups_per_unit,
                defer_multiply: kernels.defer_multiply,
                batch_products: kernels.batch_products,
                batch_rotations: kernels.batch_rotations,
                batch_waves: kernels.batch_waves,
                encode: kernels.encode,
                barrett_dq: kernels.barrett_dq,
                memcache: d.memcache_active,
                tiles: d.partition,
                dump_programs: d.dump_programs,
                issue_thread: d.issue_thread,
            },
        }
    }
}

impl Default for Experiment {
    fn default() -> Self {
        Config::default().experiment
    }
}

impl Experiment {
    /// The transform these settings pick.
    pub fn ntt(&self) -> NttStrategy {
        if self.naive_ntt {
            NttStrategy::Naive
        } else {
            NttStrategy::Staged(self.variant)
        }
    }

    /// The CKKS kernels these settings pick.
    pub fn kernel_choices(&self) -> KernelChoices {
        KernelChoices {
            fused: self.fused,
            barrett_dq: self.barrett_dq,
            chain_log_n: self.chain_log_n,
            chain_groups_per_unit: self.chain_groups_per_unit,
            defer_multiply: self.defer_multiply,
            batch_products: self.batch_products,
            batch_rotations: self.batch_rotations,
            batch_waves: self.batch_waves,
            encode: self.encode,
        }
    }
}

impl Config {
    /// The device layer's options: device choice, queues, pool, launches, experiments. The
    /// profiler is the process-wide one: made by the `profile` setting, or enabled before.
    pub fn device_options(&self) -> DeviceOptions {
        DeviceOptions {
            selector: self.device.clone(),
            devices: self.devices.clone(),
            partition: self.experiment.tiles,
            queues_per_tile: self.queues,
            sync_each_launch: self.sync,
            profiler: match &self.profile {
                Some(path) => Some(profiler::enable_global_dumping_to(path.clone())),
                None => profiler::global(),
            },
            memcache: MemcacheConfig {
                poison: self.poison,
                max_bytes_held: self.max_bytes,
                slab_bytes: DEFAULT_SLAB_BYTES,
            },
            memcache_active: self.experiment.memcache,
            dump_programs: self.experiment.dump_programs.clone(),
            issue_thread: self.experiment.issue_thread,
        }
    }

    /// The backend these settings describe: its devices, NTT, CKKS kernels, transparency
    /// check and caps.
    pub fn backend(&self) -> Result<Backend> {
        let devices = Devices::new(self.device_options())?;
        let mut backend = Backend::new(devices, self.experiment.ntt())?
            .with_kernel_choices(self.experiment.kernel_choices())
            .checking_transparency(self.check_transparent);
        if let Some(bytes) = self.max_pinned_bytes {
            backend = backend.with_max_pinned_bytes(bytes);
        }
        Ok(match self.max_key_bytes {
            Some(bytes) => backend.with_max_key_bytes(bytes),
            None => backend,
        })
    }

    /// The settings the process environment names; the rest at their defaults.
    pub fn from_env() -> Result<Config> {
        let env = env_settings();
        Config::from_lookup(|name| {
            env.iter()
                .find(|(setting, _)| *setting == name)
                .map(|(_, value)| value.clone())
        })
    }

    /// The settings `lookup` gives a value for, by variable name; an unset or blank value
    /// is the default.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let get = |s: Setting| lookup(s.name).filter(|v| !v.trim().is_empty());
        let parse = |s: Setting| get(s).map(|v| v.trim().to_string());
        let defaults = Config::default();
        Ok(Config {
            // The selector's own error names the setting.
            device: parse(DEVICE).map_or(Ok(defaults.device), |v| v.parse())?,
            devices: parse(DEVICES).map_or(Ok(defaults.devices), |v| parsed(DEVICES, &v))?,
            queues: match parse(QUEUES) {
                None => defaults.queues,
                Some(v) => match v.parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(bad(QUEUES, &v, "a number of queues >= 1")),
                },
            },
            max_bytes: parse(MAX_BYTES).map(|v| bytes(MAX_BYTES, &v)).transpose()?,
            max_key_bytes: match parse(MAX_KEY_BYTES) {
                None => None,
                Some(v) => match bytes(MAX_KEY_BYTES, &v)? {
                    0 => return Err(bad(MAX_KEY_BYTES, &v, "a positive number of bytes")),
                    n => Some(n),
                },
            },
            max_pinned_bytes: parse(MAX_PINNED_BYTES)
                .map(|v| bytes(MAX_PINNED_BYTES, &v))
                .transpose()?,
            log: crate::logging::parse(get(LOG).as_deref()).map_err(|e| named(LOG, e))?,
            profile: get(PROFILE).map(PathBuf::from),
            crosscheck: match parse(CROSSCHECK) {
                None => defaults.crosscheck,
                Some(v) => v.parse::<u64>().map_err(|_| {
                    bad(
                        CROSSCHECK,
                        &v,
                        "`0` (off), `1` (every routed operation) or a positive integer N \
                         (every N-th routed operation)",
                    )
                })?,
            },
            check_transparent: TransparencyCheck::parse(get(CHECK_TRANSPARENT).as_deref())
                .map_err(|e| named(CHECK_TRANSPARENT, e))?,
            poison: match parse(POISON).as_deref() {
                None | Some("0") => None,
                Some("1") => Some(DEFAULT_POISON),
                Some(word) => Some(
                    u64::from_str_radix(word.trim_start_matches("0x"), 16)
                        .map_err(|_| bad(POISON, word, "0, 1 or a hexadecimal word"))?,
                ),
            },
            sync: switch(SYNC, parse(SYNC), defaults.sync)?,
            experiment: Experiment {
                naive_ntt: match parse(NTT) {
                    None => defaults.experiment.naive_ntt,
                    Some(v) => match v.parse::<NttStrategy>() {
                        Ok(strategy) => strategy == NttStrategy::Naive,
                        Err(_) => return Err(bad(NTT, &v, "`naive` or `staged`")),
                    },
                },
                variant: parse(NTT_VARIANT)
                    .map_or(Ok(defaults.experiment.variant), |v| parsed(NTT_VARIANT, &v))?,
                fused: switch(FUSED, parse(FUSED), defaults.experiment.fused)?,
                chain_log_n: match parse(CHAIN) {
                    None => defaults.experiment.chain_log_n,
                    Some(v) => match v.parse::<u32>() {
                        Ok(log_n) if log_n <= 32 => log_n,
                        _ => return Err(bad(CHAIN, &v, "a log2 N from 0 (never) to 32")),
                    },
                },
                chain_groups_per_unit: match parse(CHAIN_GROUPS) {
                    None => defaults.experiment.chain_groups_per_unit,
                    Some(v) => match v.parse::<u32>() {
                        Ok(groups) if groups <= 1024 => groups,
                        _ => return Err(bad(CHAIN_GROUPS, &v, "0 ..= 1024 work groups")),
                    },
                },
                defer_multiply: switch(
                    DEFER_MULTIPLY,
                    parse(DEFER_MULTIPLY),
                    defaults.experiment.defer_multiply,
                )?,
                batch_products: jobs_a_launch(
                    BATCH_PRODUCTS,
                    parse(BATCH_PRODUCTS),
                    defaults.experiment.batch_products,
                    "relinearizations",
                )?,
                batch_rotations: jobs_a_launch(
                    BATCH_ROTATIONS,
                    parse(BATCH_ROTATIONS),
                    defaults.experiment.batch_rotations,
                    "rotations",
                )?,
                batch_waves: match parse(BATCH_WAVES) {
                    None => defaults.experiment.batch_waves,
                    Some(v) => match v.parse::<usize>() {
                        Ok(waves) if (1..=BATCH_WAVES_MAX).contains(&waves) => waves,
                        _ => {
                            let wanted = format!("1 ..= {BATCH_WAVES_MAX} waves");
                            return Err(bad(BATCH_WAVES, &v, &wanted));
                        }
                    },
                },
                encode: parse(ENCODE)
                    .map_or(Ok(defaults.experiment.encode), |v| parsed(ENCODE, &v))?,
                barrett_dq: switch(
                    BARRETT_DQ,
                    parse(BARRETT_DQ),
                    defaults.experiment.barrett_dq,
                )?,
                memcache: switch(MEMCACHE, parse(MEMCACHE), defaults.experiment.memcache)?,
                tiles: parse(TILES).map_or(Ok(defaults.experiment.tiles), |v| parsed(TILES, &v))?,
                dump_programs: get(DUMP_PROGRAMS).map(PathBuf::from),
                issue_thread: switch(
                    ISSUE_THREAD,
                    parse(ISSUE_THREAD),
                    defaults.experiment.issue_thread,
                )?,
            },
        })
    }
}

/// The values the process environment gives settings, by name (unset ones left out): the
/// one place the library reads the environment for settings.
pub fn env_settings() -> Vec<(&'static str, String)> {
    SETTINGS
        .iter()
        .filter_map(|s| std::env::var(s.name).ok().map(|value| (s.name, value)))
        .collect()
}

/// `value` as the type of `setting`; an error names the setting.
fn parsed<T: std::str::FromStr<Err = Error>>(setting: Setting, value: &str) -> Result<T> {
    value.parse().map_err(|e| named(setting, e))
}

/// `error` (a value of `setting` that does not parse), naming the setting.
fn named(setting: Setting, error: Error) -> Error {
    Error::invalid(format!("{}: {error}", setting.name))
}

/// A batch setting's key switches a chained launch (1 to `KS_JOBS_MAX`; `default` unset).
fn jobs_a_launch(
    setting: Setting,
    value: Option<String>,
    default: usize,
    what: &str,
) -> Result<usize> {
    match value {
        None => Ok(default),
        Some(v) => match v.parse::<usize>() {
            Ok(jobs) if (1..=KS_JOBS_MAX).contains(&jobs) => Ok(jobs),
            _ => Err(bad(setting, &v, &format!("1 ..= {KS_JOBS_MAX} {what}"))),
        },
    }
}

fn bad(setting: Setting, value: &str, wanted: &str) -> Error {
    Error::invalid(format!("{}={value:?} is not {wanted}", setting.name))
}

fn bytes(setting: Setting, value: &str) -> Result<u64> {
    value
        .parse::<u64>()
        .map_err(|_| bad(setting, value, "a number of bytes"))
}

/// `on` / `1` / `true` or `off` / `0` / `false` (any case); unset is `default`.
fn switch(setting: Setting, value: Option<String>, default: bool) -> Result<bool> {
    match value.map(|v| v.to_ascii_lowercase()).as_deref() {
        None => Ok(default),
        Some("1" | "on" | "true") => Ok(true),
        Some("0" | "off" | "false") => Ok(false),
        Some(other) => Err(bad(setting, other, "on / 1 or off / 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(Setting, &str)]) -> Result<Config> {
        Config::from_lookup(|name| {
            pairs
                .iter()
                .find(|(s, _)| s.name == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(from(&[]).unwrap(), Config::default());
        let blanks: Vec<(Setting, &str)> = SETTINGS.iter().map(|&s| (s, " ")).collect();
        assert_eq!(from(&blanks).unwrap(), Config::default());
    }

    #[test]
    fn each_setting_parses_its_values() {
        let config = from(&[
            (DEVICE, "cpu"),
            (DEVICES, "1,0"),
            (QUEUES, " 4 "),
            (MAX_BYTES, "1000"),
            (MAX_KEY_BYTES, "2000"),
            (MAX_PINNED_BYTES, "0"),
            (LOG, "DEBUG"),
            (PROFILE, "/tmp/p"),
            (CROSSCHECK, "3"),
            (CHECK_TRANSPARENT, "eager"),
            (POISON, "0xff"),
            (SYNC, "on"),
            (NTT, "naive"),
            (FUSED, "0"),
            (CHAIN, "13"),
            (CHAIN_GROUPS, "0"),
            (DEFER_MULTIPLY, "0"),
            (MEMCACHE, "off"),
            (TILES, "2"),
            (DUMP_PROGRAMS, "/tmp/d"),
            (ISSUE_THREAD, "off"),
        ])
        .unwrap();
        assert_eq!(config.device, DeviceSelector::Cpu);
        assert_eq!(config.devices, DeviceSet::Only(vec![1, 0]));
        assert_eq!(config.queues, 4);
        assert_eq!(config.max_bytes, Some(1000));
        assert_eq!(config.max_key_bytes, Some(2000));
        assert_eq!(config.max_pinned_bytes, Some(0));
        assert_eq!(config.log, Level::DEBUG);
        assert_eq!(config.profile, Some(PathBuf::from("/tmp/p")));
        assert_eq!(config.crosscheck, 3);
        assert_eq!(config.check_transparent, TransparencyCheck::Eager);
        assert_eq!(config.poison, Some(0xff));
        assert!(config.sync);
        assert_eq!(config.experiment.ntt(), NttStrategy::Naive);
        assert!(!config.experiment.fused);
        assert_eq!(config.experiment.chain_log_n, 13);
        assert_eq!(config.experiment.chain_groups_per_unit, 0);
        assert!(!config.experiment.defer_multiply);
        assert!(!config.experiment.memcache);
        assert_eq!(config.experiment.tiles, Partition::Split(2));
        assert_eq!(
            config.experiment.dump_programs,
            Some(PathBuf::from("/tmp/d"))
        );
        assert!(!config.experiment.issue_thread);
        assert_eq!(from(&[(POISON, "1")]).unwrap().poison, Some(DEFAULT_POISON));
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        for (setting, value) in [
            (DEVICE, "tpu"),
            (DEVICES, "0,0"),
            (QUEUES, "0"),
            (MAX_BYTES, "lots"),
            (MAX_KEY_BYTES, "0"),
            (MAX_PINNED_BYTES, "-1"),
            (LOG, "loud"),
            (CROSSCHECK, "often"),
            (CHECK_TRANSPARENT, "sometimes"),
            (POISON, "xyz"),
            (SYNC, "maybe"),
            (NTT, "fast"),
            (NTT_VARIANT, "r3"),
            (FUSED, "2"),
            (CHAIN, "yes"),
            (CHAIN_GROUPS, "many"),
            (DEFER_MULTIPLY, "later"),
            (MEMCACHE, "perhaps"),
            (TILES, "0"),
        ] {
            let err = from(&[(setting, value)]).unwrap_err();
            assert_eq!(
                err.kind(),
                crate::ErrorKind::InvalidArgument,
                "{}",
                setting.name
            );
            let message = err.to_string();
            assert!(
                message.contains(setting.name) && message.contains(value),
                "{}={value}: {message}",
                setting.name
            );
        }
    }

    /// The `SEAL_OPENCL_*` names of a markdown table's first column, in `section` of `page`
    /// (from its heading to the next one of the same level).
    fn documented(page: &str, section: &str) -> Vec<String> {
        let start = page
            .find(section)
            .unwrap_or_else(|| panic!("no {section:?}"));
        let rest = &page[start + section.len()..];
        let end = rest.find("\n## ").unwrap_or(rest.len());
        rest[..end]
            .lines()
            .filter_map(|l| l.strip_prefix("| `SEAL_OPENCL_"))
            .map(|l| format!("SEAL_OPENCL_{}", &l[..l.find('`').unwrap()]))
            .collect()
    }

    #[test]
    fn the_docs_list_every_setting_where_it_belongs() {
        let names = |experiment: bool| -> Vec<String> {
            SETTINGS
                .iter()
                .filter(|s| s.experiment == experiment)
                .map(|s| s.name.to_string())
                .collect()
        };
        let settings = include_str!("../docs/SETTINGS.md");
        assert_eq!(documented(settings, "## For users"), names(false));
        assert_eq!(
            documented(settings, "## For benchmarks and tests"),
            names(true)
        );
        let readme = include_str!("../README.md");
        assert_eq!(documented(readme, "## Settings"), names(false));
    }

    #[test]
    fn the_table_names_each_setting_once() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert!(s.name.starts_with("SEAL_OPENCL_"), "{}", s.name);
            assert!(
                SETTINGS[i + 1..].iter().all(|t| t.name != s.name),
                "{}",
                s.name
            );
        }
    }
}
