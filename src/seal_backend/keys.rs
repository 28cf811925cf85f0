//! Key switching keys on the device, uploaded once and reused while unchanged (DESIGN.md:
//! keys upload once per tile). A key vector is named by the address of its KSwitchKeys
//! object and its index; a fingerprint of its words tells a regenerated or reloaded key in
//! the same object from the one uploaded, which it then replaces.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::ckks::context::KswitchKey;

/// One key vector of one KSwitchKeys object, with its contents' fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyId {
    pub address: usize,
    pub index: usize,
    pub fingerprint: u64,
}

/// A device key with the fingerprint of the words it was uploaded from.
type Entry = (u64, Arc<KswitchKey>);

#[derive(Default)]
pub(super) struct KeyCache {
    /// By (address, index).
    keys: Mutex<HashMap<(usize, usize), Entry>>,
}

impl KeyCache {
    pub(super) fn get(&self, id: &KeyId) -> Option<Arc<KswitchKey>> {
        match self.keys.lock().get(&(id.address, id.index)) {
            Some((fingerprint, key)) if *fingerprint == id.fingerprint => Some(key.clone()),
            _ => None,
        }
    }

    pub(super) fn insert(&self, id: KeyId, key: KswitchKey) {
        self.keys
            .lock()
            .insert((id.address, id.index), (id.fingerprint, Arc::new(key)));
    }
}
