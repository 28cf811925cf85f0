//! Code the SEAL-level benchmarks share (routines, ops, matmul, multiqueue): argument
//! parsing, the backend configurations they switch between, and the JSON result files.
//! Each bench includes it with `mod common;` and uses what it needs.
#![allow(dead_code)]

pub mod butterflies;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use seal_opencl::{Error, Result};

/// The command line: `--quick`, `--json PATH` and the bench's own `--name value` options.
pub struct Args {
    args: Vec<String>,
    pub quick: bool,
}

impl Args {
    /// Parses `std::env::args`, rejecting anything that is not `--quick`, `--json PATH` or
    /// one of `options` followed by its value (cargo's own `--bench` is dropped).
    pub fn parse(usage: &str, options: &[&str]) -> Result<Args> {
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| a != "--bench")
            .collect();
        let mut i = 0;
        while i < args.len() {
            match args[i].as_str() {
                "--quick" => i += 1,
                "-h" | "--help" => {
                    println!("usage: {usage}");
                    std::process::exit(0);
                }
                a if a == "--json" || options.contains(&a) => {
                    if i + 1 >= args.len() {
                        return Err(Error::InvalidArgument(format!("{a} needs a value")));
                    }
                    i += 2;
                }
                a => {
                    return Err(Error::InvalidArgument(format!(
                        "unknown argument {a:?}; usage: {usage}"
                    )))
                }
            }
        }
        let quick = args.iter().any(|a| a == "--quick");
        Ok(Args { args, quick })
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.args.get(i + 1))
            .map(String::as_str)
    }

    /// A comma-separated list, or the default for `--quick` / a full run.
    pub fn list<T: std::str::FromStr + Clone>(
        &self,
        name: &str,
        quick: &[T],
        full: &[T],
    ) -> Result<Vec<T>> {
        match self.value(name) {
            Some(v) => v
                .split(',')
                .map(|x| {
                    x.trim().parse().map_err(|_| {
                        Error::InvalidArgument(format!("{name}: cannot read {x:?} in {v:?}"))
                    })
                })
                .collect(),
            None if self.quick => Ok(quick.to_vec()),
            None => Ok(full.to_vec()),
        }
    }

    /// A number (at least 1), or the default for `--quick` / a full run.
    pub fn count(&self, name: &str, quick: usize, full: usize) -> Result<usize> {
        Ok(self
            .list(name, &[quick], &[full])?
            .first()
            .copied()
            .unwrap_or(1)
            .max(1))
    }

    /// Where the results go: `--json PATH`, else (not with `--quick`)
    /// `benches/results/<bench>-<device>-<date>.json`.
    pub fn json_path(&self, bench: &str, run: &Run) -> Option<String> {
        match (self.value("--json"), self.quick) {
            (Some(path), _) => Some(path.to_string()),
            (None, true) => None,
            (None, false) => Some(results_path(bench, &run.device, &run.date_utc)),
        }
    }
}

/// A backend configuration the benches compare.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Setup {
    pub name: &'static str,
    /// `SEAL_OPENCL_NTT`.
    pub ntt: &'static str,
    /// `SEAL_OPENCL_FUSED`.
    pub fused: bool,
    /// `SEAL_OPENCL_MEMCACHE`.
    pub memcache: bool,
}

/// The naive GPU baseline: radix-2 global-memory NTT, unfused multiply-add, no memcache.
pub const BASELINE: Setup = Setup {
    name: "baseline",
    ntt: "naive",
    fused: false,
    memcache: false,
};

/// The tuned backend (every optimisation on).
pub const TUNED: Setup = Setup {
    name: "tuned",
    ntt: "staged",
    fused: true,
    memcache: true,
};

impl Setup {
    /// Replaces the installed backend by one configured as `self`. The caller must have
    /// dropped every device ciphertext and plaintext of the previous backend.
    pub fn install(&self) -> Result<()> {
        let bridge = |e: cxx::Exception| Error::Logic(e.to_string());
        seal_opencl::ffi::uninstall_backend().map_err(bridge)?;
        use seal_opencl::config::{env_settings, FUSED, MEMCACHE, NTT};
        let on = |b: bool| if b { "1" } else { "0" };
        let mut settings = env_settings();
        settings.push((NTT.name, self.ntt.into()));
        settings.push((FUSED.name, on(self.fused).into()));
        settings.push((MEMCACHE.name, on(self.memcache).into()));
        seal_opencl::ffi::install_backend_with(&settings).map_err(bridge)
    }
}

/// `benches/results/<bench>-<device>-<day>.json`: the device's name with every character
/// but ASCII letters and digits made `_`, the day the first 10 characters of `date_utc`.
pub fn results_path(bench: &str, device: &str, date_utc: &str) -> String {
    let device: String = device
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("benches/results/{bench}-{device}-{}.json", &date_utc[..10])
}

/// What every result file records about the run.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub bench: &'static str,
    pub device: String,
    pub date_utc: String,
    pub unix_time_s: u64,
    pub quick: bool,
    /// The staged NTT's variant (`SEAL_OPENCL_NTT_VARIANT`) of the setups that run it.
    pub ntt_variant: String,
    pub cpu_fallbacks: Vec<String>,
}

impl Run {
    /// The device the backend would take (`SEAL_OPENCL_DEVICE`), its staged NTT variant
    /// and the time now.
    pub fn new(bench: &'static str, quick: bool) -> Result<Run> {
        let device =
            seal_opencl::ffi::describe_backend("").map_err(|e| Error::Logic(e.to_string()))?;
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(Run {
            bench,
            device,
            date_utc: seal_opencl::profiler::utc_date(unix),
            unix_time_s: unix,
            quick,
            ntt_variant: seal_opencl::config::Config::from_env()?
                .experiment
                .variant
                .to_string(),
            cpu_fallbacks: Vec::new(),
        })
    }

    /// Whether the device is a CPU (e.g. PoCL): the "GPU" figures are that device's.
    pub fn on_cpu_device(&self) -> bool {
        !self.device.contains("GPU")
    }

    pub fn banner(&self) {
        println!(
            "seal-opencl {} bench on {}, {} UTC",
            self.bench, self.device, self.date_utc
        );
        if self.on_cpu_device() {
            println!(
                "(no GPU: the OpenCL device is the CPU, e.g. PoCL; device columns are its times)"
            );
        }
    }
}

/// Writes `{ "run": run, <body's fields> }` to the path [`Args::json_path`] gives, if any,
/// after recording the operations SEAL ran on the CPU instead of the backend.
pub fn write_json<T: Serialize>(args: &Args, run: &mut Run, body: &T) -> Result<()> {
    run.cpu_fallbacks = seal_opencl::ffi::cpu_fallbacks();
    let Some(path) = args.json_path(run.bench, run) else {
        return Ok(());
    };
    #[derive(Serialize)]
    struct File<'a, T> {
        run: &'a Run,
        #[serde(flatten)]
        body: &'a T,
    }
    let text =
        serde_json::to_string_pretty(&File { run, body }).map_err(|e| Error::Io(e.to_string()))?;
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io(format!("{path}: {e}")))?;
    }
    std::fs::write(&path, text).map_err(|e| Error::Io(format!("{path}: {e}")))?;
    println!("results written to {path}");
    Ok(())
}

/// The median of `values` (the upper one of an even count); NaN for none.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The check column of a table row: whether the results compared were identical.
pub fn check_cell(identical: bool) -> &'static str {
    if identical {
        "identical"
    } else {
        "DIFFERENT"
    }
}

/// Fails when a device result differed from the CPU's (after the tables are printed).
pub fn require_identical(all: bool) -> Result<()> {
    if all {
        println!("every GPU result is identical to SEAL's CPU result");
        Ok(())
    } else {
        Err(Error::Logic(
            "a GPU result differs from SEAL's CPU result".into(),
        ))
    }
}

/// The device's copy bandwidth in GB/s (one read + one write of each word counted) on
/// `SEAL_OPENCL_DEVICE`: the median of 20 device-to-device copies of `words` words, timed
/// by profiling events; the per-kernel tables set kernels' bytes against it.
pub fn device_copy_gb_s(words: usize) -> Result<f64> {
    use seal_opencl::cl::{self, Context, Event};
    use seal_opencl::config::Config;
    let ctx = Context::new(&Config::from_env()?.device)?;
    let queue = ctx.queue(true)?;
    let (src, dst) = (ctx.buffer(&queue, words)?, ctx.buffer(&queue, words)?);
    let mut times = (0..21)
        .map(|_| {
            let mut e = Event::empty();
            cl::copy(&queue, &src, &dst, Some(&mut e))?;
            queue.finish()?;
            cl::event_nanos(&e)
        })
        .collect::<Result<Vec<u64>>>()?;
    times.sort_unstable();
    Ok((2 * words * 8) as f64 / times[times.len() / 2] as f64)
}
