//! What the test files share: random generators whose seed is printed, SEAL's primes, and
//! the child-process harness ([`child_test!`]) for tests that must own their process.

use rand::SeedableRng;
use seal_opencl::arith::{get_primes, Modulus};

/// A random generator whose seed is printed, so a failure can be replayed.
pub fn rng() -> rand::rngs::StdRng {
    let seed = rand::random();
    eprintln!("seed {seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// Distinct primes 1 mod 2N (N = 2^`log_n`) of the given bit sizes, in the given order: the
/// k-th prime of a size is SEAL's k-th largest of that size.
pub fn primes(log_n: u32, bits: &[i32]) -> Vec<Modulus> {
    bits.iter()
        .enumerate()
        .map(|(i, &b)| {
            let same_size = bits[..i].iter().filter(|&&x| x == b).count();
            let p = get_primes(2 << log_n, b, same_size + 1).unwrap()[same_size];
            Modulus::new(p).unwrap()
        })
        .collect()
}

/// One prime 1 mod 2^13 of every bit size from 17 to 60, SEAL's largest of each size.
pub fn primes_17_to_60_bits() -> Vec<Modulus> {
    (17..=60)
        .map(|b| Modulus::new(get_primes(1 << 13, b, 1).unwrap()[0]).unwrap())
        .collect()
}

/// Set in the environment of a child process started by [`run_child`].
pub const CHILD_ENV_VAR: &str = "SEAL_GPU_TEST_CHILD";

/// Whether this process is a child started by [`run_child`]. Child tests are `#[ignore]`d
/// and return at once unless this holds, so `--include-ignored` in the parent stays safe.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV_VAR).is_some()
}

/// Runs the ignored test `name` of this test binary in a child process with `env` set.
/// Fails unless the child succeeds and prints `CHILD OK`.
pub fn run_child(name: &str, env: &[(&str, &str)]) {
    run_child_output(name, env);
}

/// [`run_child`], returning what the child wrote (for a test of its stderr).
pub fn run_child_output(name: &str, env: &[(&str, &str)]) -> std::process::Output {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV_VAR, "1")
        .envs(env.iter().copied())
        .args(["--ignored", "--exact", name, "--nocapture"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("CHILD OK"),
        "{name} ended with {}:\n{text}",
        out.status
    );
    out
}

/// A test that owns its process: its one installed backend with settings the other tests of
/// the file must not share, process-wide counters, the global log subscriber, an uninstall,
/// or code that might end the process. One declaration gives the test `name`, which runs
/// the ignored test `name::child` in a child process with the environment `env`, and that
/// child, which runs `body` and prints `CHILD OK` (and returns at once outside a child).
///
/// ```ignore
/// child_test! {
///     /// What the test checks.
///     fn name() [(seal_opencl::config::CROSSCHECK.name, "1")] { body }
/// }
/// ```
///
/// Where the parent does more than start the child (reads its output, starts it several
/// times), the second form gives the parent's body, with the child's name bound to `child`:
///
/// ```ignore
/// child_test! {
///     fn name() { body }
///     parent(child) { let out = run_child_output(child, &[..]); /* checks */ }
/// }
/// ```
#[macro_export]
macro_rules! child_test {
    ($(#[$attr:meta])* fn $name:ident() [$($env:expr),* $(,)?] $body:block) => {
        $crate::child_test! {
            $(#[$attr])*
            fn $name() $body
            parent(child) { $crate::harness::run_child(child, &[$($env),*]); }
        }
    };
    ($(#[$attr:meta])* fn $name:ident() $body:block parent($child:ident) $parent:block) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let $child: &str = concat!(stringify!($name), "::child");
            $parent
        }

        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            #[ignore = "run in a child process by the test of the module's name"]
            fn child() {
                if !$crate::harness::is_child() {
                    return;
                }
                $body
                println!("CHILD OK");
            }
        }
    };
}

/// Kernel launches `op` enqueues, by `profiler`'s records (cleared first), after waiting for
/// `graph`'s earlier work where one is given (so that none of its events lands in the count).
pub fn launches(
    profiler: &seal_opencl::profiler::Profiler,
    graph: Option<&seal_opencl::device::Graph>,
    op: impl FnOnce(),
) -> u64 {
    if let Some(graph) = graph {
        graph.finish().unwrap();
    }
    profiler.clear_events();
    op();
    profiler
        .kernel_stats()
        .unwrap()
        .iter()
        .map(|s| s.count)
        .sum()
}
