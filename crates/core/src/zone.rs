//! Shared zones (`limit_req_zone`, `limit_conn_zone`): the one place where
//! worker threads share request-path state.
//!
//! **Why shared.** nginx keeps these states in shared memory so that a
//! client is limited across all worker processes: a rate of 2 r/s must not
//! become 2 r/s per worker. Peregrine's workers are threads of one process,
//! so a zone is an `Arc<Zone>` every worker's `HttpCore` holds, its states
//! behind one `Mutex` taken only by a request of a location with a rule
//! on that zone, for a lookup and an update (no allocation under the lock
//! but a new key's). A location without rules never reaches a zone.
//!
//! **How bounded.** As nginx's slab pool: the zone's size is a byte budget,
//! and each state costs its key plus [`NODE_OVERHEAD`], rounded up to a
//! power of two as nginx's slab allocator rounds its chunks; a new state
//! that does not fit evicts the least recently used one (limit_req, as
//! `ngx_http_limit_req_expire(ctx, 0)`) or is refused (limit_conn, which
//! evicts nothing: its states are live connections). So a 1m zone holds
//! about 16,000 `$binary_remote_addr` states, as nginx's documentation says.
//!
//! **Across reloads.** nginx keeps a zone's contents when a reload defines
//! it again with the same name and size; [`zone`] does the same through a
//! registry of the zones alive (weak references: a zone no configuration
//! uses any more is freed with the last worker holding it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

/// What a state costs besides its key: nginx's `ngx_rbtree_node_t` up to
/// its color byte and its node's fields (queue links, last time, excess,
/// count) on a 64-bit build.
pub const NODE_OVERHEAD: usize = 56;

/// The part of a zone nginx's slab pool keeps for itself (its header and a
/// page descriptor per 4 KiB page): one page plus 1/64 of the zone.
fn usable(size: usize) -> usize {
    size.saturating_sub(4096 + size / 64)
}

/// The bytes one state with a `key_len`-byte key takes.
pub fn node_cost(key_len: usize) -> usize {
    (NODE_OVERHEAD + key_len).next_power_of_two()
}

/// One zone: its name and size, a clock origin for the states' times, and
/// the states.
#[derive(Debug)]
pub struct Zone<V> {
    pub name: String,
    pub size: usize,
    /// The key as written (`limit_req "one" uses the "$x" key...`).
    pub key: String,
    origin: Instant,
    pub states: Mutex<Lru<V>>,
}

impl<V> Zone<V> {
    /// Milliseconds since the zone was made (nginx's `ngx_current_msec`).
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// The zones alive, by kind, name and size.
type Registry = Mutex<
    Vec<(
        &'static str,
        String,
        usize,
        Weak<dyn std::any::Any + Send + Sync>,
    )>,
>;

static REGISTRY: Registry = Mutex::new(Vec::new());

/// The zone `name` of `kind` ("limit_req", "limit_conn") with `size` and
/// `key`: the one alive already if its definition is the same (a reload,
/// or another worker of this configuration), else a new one.
pub fn zone<V: Send + 'static>(
    kind: &'static str,
    name: &str,
    size: usize,
    key: &str,
) -> Arc<Zone<V>> {
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|(_, _, _, w)| w.strong_count() > 0);
    for (k, n, s, w) in reg.iter() {
        if *k == kind
            && n == name
            && *s == size
            && let Some(any) = w.upgrade()
            && let Ok(z) = any.downcast::<Zone<V>>()
            && z.key == key
        {
            return z;
        }
    }
    let z = Arc::new(Zone {
        name: name.to_string(),
        size,
        key: key.to_string(),
        origin: Instant::now(),
        states: Mutex::new(Lru::new(usable(size))),
    });
    let any: Arc<dyn std::any::Any + Send + Sync> = z.clone();
    reg.push((kind, name.to_string(), size, Arc::downgrade(&any)));
    z
}

const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct Node<V> {
    key: Box<[u8]>,
    value: V,
    /// Towards the most recently used end.
    prev: u32,
    /// Towards the least recently used end.
    next: u32,
}

/// States by key in recency order, within a byte budget.
#[derive(Debug)]
pub struct Lru<V> {
    index: HashMap<Box<[u8]>, u32>,
    nodes: Vec<Option<Node<V>>>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    used: usize,
    budget: usize,
}

impl<V> Lru<V> {
    pub fn new(budget: usize) -> Self {
        Lru {
            index: HashMap::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            used: 0,
            budget,
        }
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    fn node(&mut self, i: u32) -> &mut Node<V> {
        match self.nodes[i as usize].as_mut() {
            Some(n) => n,
            None => unreachable!("a linked index names a live node"),
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let n = self.node(i);
            (n.prev, n.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.node(p).next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.node(n).prev = prev,
        }
    }

    fn push_front(&mut self, i: u32) {
        let old = self.head;
        {
            let n = self.node(i);
            n.prev = NIL;
            n.next = old;
        }
        match old {
            NIL => self.tail = i,
            o => self.node(o).prev = i,
        }
        self.head = i;
    }

    /// The state of `key`, made the most recently used.
    pub fn get(&mut self, key: &[u8]) -> Option<&mut V> {
        let i = *self.index.get(key)?;
        self.unlink(i);
        self.push_front(i);
        Some(&mut self.node(i).value)
    }

    /// The least recently used state.
    pub fn oldest(&mut self) -> Option<&mut V> {
        match self.tail {
            NIL => None,
            t => Some(&mut self.node(t).value),
        }
    }

    /// Removes the least recently used state.
    pub fn pop_oldest(&mut self) -> Option<V> {
        match self.tail {
            NIL => None,
            t => self.remove_at(t),
        }
    }

    /// Removes `key`'s state.
    pub fn remove(&mut self, key: &[u8]) -> Option<V> {
        let i = *self.index.get(key)?;
        self.remove_at(i)
    }

    fn remove_at(&mut self, i: u32) -> Option<V> {
        self.unlink(i);
        let n = self.nodes[i as usize].take()?;
        self.index.remove(&n.key);
        self.used -= node_cost(n.key.len());
        self.free.push(i);
        Some(n.value)
    }

    /// Whether a state for a `key_len`-byte key fits now.
    pub fn fits(&self, key_len: usize) -> bool {
        self.used + node_cost(key_len) <= self.budget
    }

    /// Adds `key` (not present) as the most recently used; `false` when it
    /// does not fit (nginx's `ngx_slab_alloc_locked` failing).
    pub fn insert(&mut self, key: &[u8], value: V) -> bool {
        if !self.fits(key.len()) {
            return false;
        }
        self.used += node_cost(key.len());
        let node = Node {
            key: key.into(),
            value,
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = Some(node);
                i
            }
            None => {
                self.nodes.push(Some(node));
                u32::try_from(self.nodes.len() - 1).unwrap_or(NIL)
            }
        };
        self.index.insert(key.into(), i);
        self.push_front(i);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_zone_evicts_the_least_recently_used() {
        let cost = node_cost(4);
        assert_eq!(cost, 64);
        let mut lru: Lru<u32> = Lru::new(3 * cost);
        assert!(lru.insert(b"aaaa", 1));
        assert!(lru.insert(b"bbbb", 2));
        assert!(lru.insert(b"cccc", 3));
        assert!(!lru.insert(b"dddd", 4), "over budget");
        // Touching `a` makes `b` the oldest.
        assert_eq!(lru.get(b"aaaa").copied(), Some(1));
        assert_eq!(lru.pop_oldest(), Some(2));
        assert!(lru.insert(b"dddd", 4));
        assert_eq!(lru.len(), 3);
        assert_eq!(lru.get(b"bbbb"), None);
        assert_eq!(lru.pop_oldest(), Some(3));
        assert_eq!(lru.pop_oldest(), Some(1));
        assert_eq!(lru.remove(b"dddd"), Some(4));
        assert!(lru.is_empty());
        assert_eq!(lru.pop_oldest(), None);
    }

    #[test]
    fn a_megabyte_holds_about_sixteen_thousand_addresses() {
        let n = usable(1 << 20) / node_cost(4);
        assert!((15_000..=16_384).contains(&n), "{n}");
    }

    #[test]
    fn a_definition_alive_is_shared() {
        let a: Arc<Zone<u8>> = zone("test", "z", 1 << 16, "$k");
        let b: Arc<Zone<u8>> = zone("test", "z", 1 << 16, "$k");
        assert!(Arc::ptr_eq(&a, &b));
        let c: Arc<Zone<u8>> = zone("test", "z", 1 << 17, "$k");
        assert!(!Arc::ptr_eq(&a, &c), "another size is another zone");
    }
}
