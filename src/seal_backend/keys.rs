//! Key switching keys on the device, uploaded once per tile and reused while unchanged: the
//! backend keeps one cache per tile, filled on the first use there. A key
//! vector is named by its KSwitchKeys object's id (`KSwitchKeys::gpu_id`, never reused in
//! the process) and its index; the object's version (`KSwitchKeys::gpu_version`, bumped by
//! every write access) tells changed words from the ones uploaded, which are then replaced.
//! Destroying the object frees its device copies.
//!
//! Each cache holds at most a byte cap of keys (`SEAL_OPENCL_MAX_KEY_BYTES`): a server that
//! serves many clients, each with its own keys, evicts the least recently used key vectors
//! and uploads them again on their next use. An operation holding an evicted key keeps it
//! alive until it is enqueued, and OpenCL keeps the buffer until its commands finished.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::ckks::context::KswitchKey;

/// One key vector of one KSwitchKeys object, at one version of its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyId {
    pub object: u64,
    pub index: usize,
    pub version: u64,
}

struct Entry {
    version: u64,
    key: Arc<KswitchKey>,
    bytes: u64,
    /// The cache's clock at the last use (least recently used goes first).
    used: u64,
}

#[derive(Default)]
struct State {
    /// By (object, index).
    keys: HashMap<(u64, usize), Entry>,
    bytes: u64,
    clock: u64,
    evictions: u64,
}

/// What the key cache holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyCacheStats {
    pub key_vectors: usize,
    pub bytes: u64,
    pub max_bytes: u64,
    pub evictions: u64,
}

/// Sums of several caches (one per tile): the caps add up too.
impl std::ops::AddAssign for KeyCacheStats {
    fn add_assign(&mut self, o: KeyCacheStats) {
        self.key_vectors += o.key_vectors;
        self.bytes += o.bytes;
        self.max_bytes += o.max_bytes;
        self.evictions += o.evictions;
    }
}

pub(super) struct KeyCache {
    state: Mutex<State>,
    max_bytes: u64,
}

impl KeyCache {
    /// A cache of at most `max_bytes` of keys (a key vector larger than that is still
    /// kept, alone).
    pub(super) fn new(max_bytes: u64) -> KeyCache {
        KeyCache {
            state: Mutex::new(State::default()),
            max_bytes,
        }
    }

    /// The default cap: a quarter of the device's memory.
    pub(super) fn default_max_bytes(device_bytes: u64) -> u64 {
        (device_bytes / 4).max(1)
    }

    pub(super) fn get(&self, id: &KeyId) -> Option<Arc<KswitchKey>> {
        let mut state = self.state.lock();
        state.clock += 1;
        let clock = state.clock;
        match state.keys.get_mut(&(id.object, id.index)) {
            Some(entry) if entry.version == id.version => {
                entry.used = clock;
                Some(entry.key.clone())
            }
            _ => None,
        }
    }

    pub(super) fn insert(&self, id: KeyId, key: KswitchKey) {
        let bytes = key.buffer().words() as u64 * 8;
        let mut state = self.state.lock();
        state.clock += 1;
        let entry = Entry {
            version: id.version,
            key: Arc::new(key),
            bytes,
            used: state.clock,
        };
        if let Some(old) = state.keys.insert((id.object, id.index), entry) {
            state.bytes -= old.bytes;
        }
        state.bytes += bytes;
        while state.bytes > self.max_bytes && state.keys.len() > 1 {
            let oldest = state
                .keys
                .iter()
                .filter(|(k, _)| **k != (id.object, id.index))
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| *k);
            let Some(oldest) = oldest else { break };
            let evicted = state.keys.remove(&oldest).expect("found above");
            state.bytes -= evicted.bytes;
            state.evictions += 1;
            tracing::debug!(
                object = oldest.0,
                index = oldest.1,
                bytes = evicted.bytes,
                "key evicted from the device (SEAL_OPENCL_MAX_KEY_BYTES)"
            );
        }
    }

    /// Drops every key vector of `object` (an operation still holding one keeps it alive
    /// until it is enqueued; the device buffer goes with the last reference).
    pub(super) fn release(&self, object: u64) {
        let mut state = self.state.lock();
        let mut freed = 0;
        state.keys.retain(|&(o, _), e| {
            let keep = o != object;
            if !keep {
                freed += e.bytes;
            }
            keep
        });
        state.bytes -= freed;
    }

    pub(super) fn stats(&self) -> KeyCacheStats {
        let state = self.state.lock();
        KeyCacheStats {
            key_vectors: state.keys.len(),
            bytes: state.bytes,
            max_bytes: self.max_bytes,
            evictions: state.evictions,
        }
    }
}
