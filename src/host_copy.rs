//! Host copies of large arrays on a small persistent pool of threads: how the words of an
//! object SEAL marks `.gpu()` move into the backend's page-locked memory (seal-patch 0007,
//! `HostMemory::copy`). One core copies 8-11 GB/s on an H100's host, a pool of 4-8 threads
//! 30-50 GB/s; a thread spawned per copy gains little (benches/results/h100-2026-11-26-calls).

use std::sync::OnceLock;

/// Copies shorter than this run on the calling thread alone: waking the pool costs about
/// what one thread copies in that time.
pub const PARALLEL_FROM_BYTES: usize = 1 << 20;
/// The most threads one copy uses, the calling thread included.
const MAX_THREADS: usize = 8;

/// The pool's workers (the calling thread copies a piece too), or none on a single core.
fn workers() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = cores.min(MAX_THREADS) - 1;
        if workers == 0 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("seal-opencl-copy-{i}"))
            .build()
            .map_err(|e| tracing::warn!("host copies on one thread: no thread pool ({e})"))
            .ok()
    })
    .as_ref()
}

/// dst = src, two slices of one length: in equal pieces, one per thread, the first on the
/// calling thread, when at least [`PARALLEL_FROM_BYTES`] long.
pub fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "host copy between slices of unequal lengths"
    );
    let pool = match workers() {
        Some(pool) if src.len() >= PARALLEL_FROM_BYTES => pool,
        _ => return dst.copy_from_slice(src),
    };
    let piece = src.len().div_ceil(pool.current_num_threads() + 1);
    pool.in_place_scope(|scope| {
        let mut pieces = dst.chunks_mut(piece).zip(src.chunks(piece));
        let first = pieces.next();
        for (d, s) in pieces {
            scope.spawn(move |_| d.copy_from_slice(s));
        }
        if let Some((d, s)) = first {
            d.copy_from_slice(s);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    // Fresh random bytes at lengths around the parallel threshold, odd ones included, into a
    // poisoned destination: every byte arrives.
    #[test]
    fn copies_every_byte_at_every_length() {
        let mut rng = rand::thread_rng();
        for len in [
            0,
            1,
            4095,
            PARALLEL_FROM_BYTES - 1,
            PARALLEL_FROM_BYTES,
            3 * PARALLEL_FROM_BYTES + 13,
            (4 << 20) + 8,
        ] {
            let mut src = vec![0u8; len];
            rng.fill_bytes(&mut src);
            let mut dst = vec![0xa5u8; len];
            copy(&mut dst, &src);
            assert!(dst == src, "copy of {len} bytes");
        }
    }

    #[test]
    #[should_panic(expected = "unequal lengths")]
    fn rejects_unequal_lengths() {
        copy(&mut [0u8; 3], &[1u8; 4]);
    }
}
