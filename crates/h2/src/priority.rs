//! The stream dependency tree of RFC 7540 §5.3, kept as nginx keeps it
//! (`ngx_http_v2_set_dependency`, `ngx_http_v2_node_children_update`,
//! `ngx_http_v2_get_closed_node`): every stream, and every idle or closed
//! stream a PRIORITY frame named, is a node with a parent, a weight
//! (1..=256), a rank (its depth: children of the root are rank 1) and a
//! relative weight (its parent's times weight/256, the root's being 1).
//!
//! The session orders the streams that send by [`Tree::cmp`]: lower rank
//! first, then higher relative weight, which is the order nginx queues
//! DATA frames in (`ngx_http_v2_queue_frame`) and resumes streams that
//! waited for the connection window (`ngx_http_v2_waiting_queue`).
//! RFC 9113 deprecates this scheme; clients still send it and nginx's
//! test suite (h2_priority.t) checks the order.
//!
//! Bounded: nodes of open streams (at most the concurrent streams the
//! connection allows) plus [`CLOSED_NODES`] of streams that are closed or
//! not yet opened. Past that the oldest of those is removed and its
//! children go to its parent, their weights shared out by the removed
//! node's weight (RFC 7540 §5.3.4). Hand-written: no crate keeps this
//! tree, and the bound and the eviction rule must be nginx's.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};

use crate::stream::Priority;

/// Nodes kept for streams that are closed or were only named by PRIORITY
/// (nginx's `h2c->closed_nodes` bound, 32). A client that sends PRIORITY
/// for many idle streams recycles these instead of growing the tree.
pub const CLOSED_NODES: usize = 32;

/// The tree's root, stream 0 (§5.3.1).
const ROOT: u32 = 0;

/// The default weight (RFC 7540 §5.3.5).
const DEFAULT_WEIGHT: u16 = 16;

#[derive(Clone, Debug)]
struct Node {
    /// `None` while a node just made has not been placed yet.
    parent: Option<u32>,
    weight: u16,
    rank: u32,
    rel_weight: f64,
    children: Vec<u32>,
    open: bool,
}

impl Node {
    fn new() -> Node {
        Node {
            parent: None,
            weight: DEFAULT_WEIGHT,
            rank: 0,
            rel_weight: 1.0,
            children: Vec::new(),
            open: false,
        }
    }
}

/// One connection's dependency tree.
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: HashMap<u32, Node>,
    /// Nodes without an open stream, oldest first (at most [`CLOSED_NODES`]).
    closed: VecDeque<u32>,
}

impl Default for Tree {
    fn default() -> Self {
        let mut root = Node::new();
        root.parent = Some(ROOT);
        root.open = true;
        Tree {
            nodes: HashMap::from([(ROOT, root)]),
            closed: VecDeque::new(),
        }
    }
}

impl Tree {
    /// A stream opened by HEADERS, with the priority the frame carried.
    /// Without one, a node PRIORITY made earlier keeps its place (nginx:
    /// "reprioritize prior PRIORITY frame records" only with the flag).
    pub fn open(&mut self, id: u32, priority: Option<Priority>) {
        if self.nodes.contains_key(&id) {
            self.closed.retain(|&c| c != id);
        } else {
            self.make(id);
        }
        let node = self.nodes.get_mut(&id).expect("made above");
        node.open = true;
        if priority.is_some() || node.parent.is_none() {
            let p = priority.unwrap_or_default();
            node.weight = p.weight;
            self.set_dependency(id, p.dependency, p.exclusive);
        }
    }

    /// A PRIORITY frame for `id`, open, closed or idle.
    pub fn prioritize(&mut self, id: u32, p: Priority) {
        if !self.nodes.contains_key(&id) {
            self.make(id);
            self.closed.push_back(id);
        }
        if let Some(n) = self.nodes.get_mut(&id) {
            n.weight = p.weight;
        }
        self.set_dependency(id, p.dependency, p.exclusive);
    }

    /// The stream closed: its node stays (a later PRIORITY may name it as
    /// a parent) among the [`CLOSED_NODES`] most recent.
    pub fn close(&mut self, id: u32) {
        let Some(n) = self.nodes.get_mut(&id).filter(|n| n.open && id != ROOT) else {
            return;
        };
        n.open = false;
        self.closed.push_back(id);
        while self.closed.len() > CLOSED_NODES {
            self.evict_oldest();
        }
    }

    /// The order two streams send in: lower rank first, then the higher
    /// relative weight. Streams the tree does not know go last.
    pub fn cmp(&self, a: u32, b: u32) -> Ordering {
        let key = |id| {
            self.nodes
                .get(&id)
                .map_or((u32::MAX, 0.0), |n| (n.rank, n.rel_weight))
        };
        let (ra, wa) = key(a);
        let (rb, wb) = key(b);
        ra.cmp(&rb).then(wb.total_cmp(&wa))
    }

    /// How many nodes the tree holds, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Never: the root is always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Adds a node not yet placed, recycling the oldest closed one first
    /// when [`CLOSED_NODES`] are kept (`ngx_http_v2_get_node_by_id`).
    fn make(&mut self, id: u32) {
        if self.closed.len() >= CLOSED_NODES {
            self.evict_oldest();
        }
        self.nodes.insert(id, Node::new());
    }

    /// Removes the oldest closed node; its children move to its parent
    /// with weights scaled to the removed node's (§5.3.4).
    fn evict_oldest(&mut self) {
        let Some(id) = self.closed.pop_front() else {
            return;
        };
        let Some(node) = self.nodes.remove(&id) else {
            return;
        };
        let parent = node.parent.unwrap_or(ROOT);
        let sum: u32 = node
            .children
            .iter()
            .filter_map(|c| self.nodes.get(c))
            .map(|c| u32::from(c.weight))
            .sum();
        for c in &node.children {
            if let Some(child) = self.nodes.get_mut(c) {
                child.parent = Some(parent);
                let w = u32::from(node.weight) * u32::from(child.weight) / sum.max(1);
                child.weight = w.clamp(1, 256) as u16;
            }
        }
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.children.retain(|&c| c != id);
            p.children.extend_from_slice(&node.children);
        }
        self.update_children(parent);
    }

    /// Places `id` under `depend` (`ngx_http_v2_set_dependency`): a
    /// parent the tree does not know means the root, not exclusively; a
    /// parent that is a descendant of `id` first moves to `id`'s place
    /// (§5.3.3); an exclusive dependency adopts the parent's children.
    fn set_dependency(&mut self, id: u32, depend: u32, mut exclusive: bool) {
        let parent = if depend != ROOT && depend != id && self.nodes.contains_key(&depend) {
            depend
        } else {
            if depend != ROOT {
                exclusive = false;
            }
            ROOT
        };
        let old = self.nodes.get(&id).and_then(|n| n.parent);
        if let Some(old) = old
            && parent != ROOT
            && self.is_ancestor(id, parent)
        {
            self.detach(parent);
            self.attach(parent, old);
            if !exclusive {
                self.update_children(parent);
            }
        }
        if old.is_some() {
            self.detach(id);
        }
        if exclusive {
            let moved: Vec<u32> = self
                .nodes
                .get_mut(&parent)
                .map(|p| std::mem::take(&mut p.children))
                .unwrap_or_default();
            for c in &moved {
                if let Some(n) = self.nodes.get_mut(c) {
                    n.parent = Some(id);
                }
            }
            if let Some(n) = self.nodes.get_mut(&id) {
                n.children.extend(moved);
            }
        }
        self.attach(id, parent);
        self.update_children(id);
    }

    /// True when `a` is above `b` in the tree.
    fn is_ancestor(&self, a: u32, b: u32) -> bool {
        let mut at = b;
        // A path is at most as long as the tree is large.
        for _ in 0..self.nodes.len() {
            match self.nodes.get(&at).and_then(|n| n.parent) {
                Some(ROOT) | None => return false,
                Some(p) if p == a => return true,
                Some(p) => at = p,
            }
        }
        false
    }

    fn detach(&mut self, id: u32) {
        let parent = self.nodes.get(&id).and_then(|n| n.parent);
        if let Some(p) = parent.and_then(|p| self.nodes.get_mut(&p)) {
            p.children.retain(|&c| c != id);
        }
    }

    /// Makes `id` a child of `parent` and sets its rank and weight.
    fn attach(&mut self, id: u32, parent: u32) {
        let (rank, rel) = match self.nodes.get_mut(&parent) {
            Some(p) => {
                p.children.push(id);
                (p.rank, p.rel_weight)
            }
            None => (0, 1.0),
        };
        if let Some(n) = self.nodes.get_mut(&id) {
            n.parent = Some(parent);
            n.rank = rank + 1;
            n.rel_weight = rel / 256.0 * f64::from(n.weight);
        }
    }

    /// Recomputes the rank and relative weight of `id`'s descendants
    /// (`ngx_http_v2_node_children_update`), without recursion.
    fn update_children(&mut self, id: u32) {
        let mut stack = vec![id];
        let mut steps = 0;
        while let Some(at) = stack.pop() {
            steps += 1;
            if steps > self.nodes.len() {
                break; // only a cycle could get here; the tree has none
            }
            let Some(n) = self.nodes.get(&at) else {
                continue;
            };
            let (rank, rel, children) = (n.rank, n.rel_weight, n.children.clone());
            for c in children {
                if let Some(child) = self.nodes.get_mut(&c) {
                    child.rank = rank + 1;
                    child.rel_weight = rel / 256.0 * f64::from(child.weight);
                    stack.push(c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(dependency: u32, weight: u16, exclusive: bool) -> Priority {
        Priority {
            dependency,
            weight,
            exclusive,
        }
    }

    fn order(t: &Tree, ids: &[u32]) -> Vec<u32> {
        let mut v = ids.to_vec();
        v.sort_by(|&a, &b| t.cmp(a, b));
        v
    }

    #[test]
    fn weights_order_siblings() {
        let mut t = Tree::default();
        t.open(1, None);
        t.open(3, None);
        assert_eq!(t.cmp(1, 3), Ordering::Equal);
        t.prioritize(1, p(0, 1, false));
        t.prioritize(3, p(0, 256, false));
        assert_eq!(order(&t, &[1, 3]), [3, 1]);
    }

    #[test]
    fn priority_before_headers_is_kept_and_dependents_go_after() {
        // h2_priority.t "dependency - PRIORITY": 1 depends on 3.
        let mut t = Tree::default();
        t.prioritize(3, p(0, 16, false));
        t.prioritize(1, p(3, 16, false));
        t.open(1, None);
        t.open(3, None);
        assert_eq!(order(&t, &[1, 3]), [3, 1]);
        // HEADERS with the flag places the stream anew.
        t.open(5, Some(p(1, 16, false)));
        assert_eq!(order(&t, &[5, 1, 3]), [3, 1, 5]);
    }

    #[test]
    fn weighted_dependencies() {
        let mut t = Tree::default();
        t.prioritize(5, p(0, 16, false));
        t.prioritize(1, p(5, 256, false));
        t.prioritize(3, p(5, 1, false));
        for id in [1, 3, 5] {
            t.open(id, None);
        }
        assert_eq!(order(&t, &[1, 3, 5]), [5, 1, 3]);
    }

    #[test]
    fn exclusive_adopts_the_siblings() {
        let mut t = Tree::default();
        t.open(1, None);
        t.open(3, None);
        t.open(5, Some(p(0, 16, true)));
        assert_eq!(order(&t, &[1, 3, 5]), [5, 1, 3]);
        assert_eq!(t.nodes[&1].parent, Some(5));
        assert_eq!(t.nodes[&ROOT].children, [5]);
    }

    #[test]
    fn a_descendant_named_as_parent_moves_up_first() {
        // §5.3.3: 1 <- 3 <- 5, then 1 depends on 5: 5 takes 1's place.
        let mut t = Tree::default();
        t.open(1, None);
        t.open(3, Some(p(1, 16, false)));
        t.open(5, Some(p(3, 16, false)));
        t.prioritize(1, p(5, 16, false));
        assert_eq!(t.nodes[&5].parent, Some(ROOT));
        assert_eq!(t.nodes[&1].parent, Some(5));
        assert_eq!(t.nodes[&3].parent, Some(1));
        assert_eq!(order(&t, &[1, 3, 5]), [5, 1, 3]);
        assert!(!t.is_ancestor(1, 5));
    }

    #[test]
    fn unknown_parent_means_the_root() {
        let mut t = Tree::default();
        t.open(1, Some(p(99, 16, true)));
        assert_eq!(t.nodes[&1].parent, Some(ROOT));
        assert_eq!(t.nodes[&1].rank, 1);
    }

    #[test]
    fn closed_nodes_are_bounded_and_children_move_up() {
        let mut t = Tree::default();
        t.open(1, None);
        t.open(3, Some(p(1, 16, false)));
        t.open(5, Some(p(3, 16, false)));
        t.close(3);
        // Many idle streams named by PRIORITY: the tree stays bounded and
        // the oldest closed node (3) goes, 5 moving under 1.
        for id in (7..1000).step_by(2) {
            t.prioritize(id, p(0, 16, false));
            assert!(t.len() <= 1 + 2 + CLOSED_NODES);
        }
        assert!(!t.nodes.contains_key(&3));
        assert_eq!(t.nodes[&5].parent, Some(1));
        assert_eq!(t.nodes[&5].rank, 2);
        assert_eq!(t.nodes[&1].children, [5]);
    }

    #[test]
    fn any_sequence_keeps_a_tree() {
        // Every parent link leads to the root and ranks match depths.
        let mut t = Tree::default();
        let mut x = 7u32;
        for i in 0..3000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let id = 1 + 2 * (x >> 8) % 41;
            let dep = (x >> 16) % 45;
            let pr = p(dep, (x % 256) as u16 + 1, x & 1 == 0);
            match i % 4 {
                0 => t.open(id, Some(pr)),
                1 => t.close(id),
                _ if dep != id => t.prioritize(id, pr),
                _ => {}
            }
            for (&id, n) in &t.nodes {
                if id == ROOT {
                    continue;
                }
                let parent = n.parent.expect("placed");
                assert_eq!(n.rank, t.nodes[&parent].rank + 1, "node {id}");
                assert!(t.nodes[&parent].children.contains(&id));
            }
            assert!(t.closed.len() <= CLOSED_NODES);
        }
    }
}
