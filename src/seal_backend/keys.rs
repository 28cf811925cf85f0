//! Key switching keys on the device, uploaded once and reused while unchanged (DESIGN.md:
//! keys upload once per tile). A key vector is named by its KSwitchKeys object's id
//! (`KSwitchKeys::gpu_id`, never reused in the process) and its index; the object's version
//! (`KSwitchKeys::gpu_version`, bumped by every write access) tells changed words from the
//! ones uploaded, which are then replaced. Destroying the object frees its device copies.

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

/// A device key with the version of the words it was uploaded from.
type Entry = (u64, Arc<KswitchKey>);

#[derive(Default)]
pub(super) struct KeyCache {
    /// By (object, index).
    keys: Mutex<HashMap<(u64, usize), Entry>>,
}

impl KeyCache {
    pub(super) fn get(&self, id: &KeyId) -> Option<Arc<KswitchKey>> {
        match self.keys.lock().get(&(id.object, id.index)) {
            Some((version, key)) if *version == id.version => Some(key.clone()),
            _ => None,
        }
    }

    pub(super) fn insert(&self, id: KeyId, key: KswitchKey) {
        self.keys
            .lock()
            .insert((id.object, id.index), (id.version, Arc::new(key)));
    }

    /// Drops every key vector of `object` (an operation still holding one keeps it alive
    /// until it is enqueued; the device buffer goes with the last reference).
    pub(super) fn release(&self, object: u64) {
        self.keys.lock().retain(|&(o, _), _| o != object);
    }

    /// Key vectors on the device.
    pub(super) fn len(&self) -> usize {
        self.keys.lock().len()
    }
}
