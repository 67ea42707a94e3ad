//! The runqueue timeline: a red-black tree keyed by virtual deadline and
//! augmented with subtree `min_vruntime`, `min_slice` and `max_slice`
//! (docs/model.md §3.1, fair.c `tasks_timeline` with `min_vruntime_cb`).
//!
//! It follows the classic red-black insert/erase algorithms that
//! lib/rbtree.c implements, so the same sequence of insertions and
//! removals gives the same shape as the kernel's tree; that matters only
//! where fair.c looks at the root (`__pick_root_entity`). Equal deadlines
//! go right, so among equal deadlines the earlier-inserted entity is
//! leftmost, as in the kernel. Keys compare by signed difference, so
//! vruntime and deadline may wrap.
//!
//! Nodes live in an arena indexed by `u32`; the tree stores copies of the
//! entity fields it orders and aggregates by (entities are only changed
//! while out of the tree, as in fair.c).

use crate::entity::EntityId;

const NIL: u32 = u32::MAX;

/// Signed comparison of two wrapping virtual times: `a < b`.
#[inline]
pub fn vtime_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// The earlier of two wrapping virtual times.
#[inline]
pub fn vtime_min(a: u64, b: u64) -> u64 {
    if vtime_before(b, a) {
        b
    } else {
        a
    }
}

/// What the tree stores about one queued entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeItem {
    pub id: EntityId,
    pub deadline: u64,
    pub vruntime: u64,
    pub slice: u64,
}

#[derive(Clone, Debug)]
struct Node {
    item: TreeItem,
    left: u32,
    right: u32,
    parent: u32,
    red: bool,
    min_vruntime: u64,
    min_slice: u64,
    max_slice: u64,
}

/// The augmented red-black tree.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    leftmost: u32,
    len: usize,
}

/// A handle to a node, stored by the entity while it is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRef(u32);

impl Timeline {
    pub fn new() -> Self {
        Timeline {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NIL,
            leftmost: NIL,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entity with the earliest deadline (`__pick_first_entity`).
    pub fn first(&self) -> Option<TreeItem> {
        (self.leftmost != NIL).then(|| self.nodes[self.leftmost as usize].item)
    }

    /// The entity at the root (`__pick_root_entity`).
    pub fn root(&self) -> Option<TreeItem> {
        (self.root != NIL).then(|| self.nodes[self.root as usize].item)
    }

    /// Whole-tree aggregates: (min_vruntime, min_slice, max_slice).
    pub fn aggregates(&self) -> Option<(u64, u64, u64)> {
        (self.root != NIL).then(|| {
            let n = &self.nodes[self.root as usize];
            (n.min_vruntime, n.min_slice, n.max_slice)
        })
    }

    /// The item stored at `r`.
    pub fn get(&self, r: NodeRef) -> TreeItem {
        self.nodes[r.0 as usize].item
    }

    /// Items in key order (deadline, then insertion).
    pub fn iter(&self) -> impl Iterator<Item = TreeItem> + '_ {
        let mut stack = Vec::new();
        let mut cur = self.root;
        std::iter::from_fn(move || {
            while cur != NIL {
                stack.push(cur);
                cur = self.nodes[cur as usize].left;
            }
            let n = stack.pop()?;
            cur = self.nodes[n as usize].right;
            Some(self.nodes[n as usize].item)
        })
    }

    /// The heap search of `pick_eevdf` (docs/model.md §3.4): the leftmost
    /// (earliest-deadline, earliest-inserted) item for which `eligible`
    /// holds, descending into a left subtree only when its
    /// `min_vruntime` is eligible. O(log n).
    pub fn search_eligible(&self, eligible: impl Fn(u64) -> bool) -> Option<TreeItem> {
        let mut node = self.root;
        while node != NIL {
            let n = &self.nodes[node as usize];
            if n.left != NIL && eligible(self.nodes[n.left as usize].min_vruntime) {
                node = n.left;
                continue;
            }
            if eligible(n.item.vruntime) {
                return Some(n.item);
            }
            node = n.right;
        }
        None
    }

    fn alloc(&mut self, item: TreeItem) -> u32 {
        let node = Node {
            item,
            left: NIL,
            right: NIL,
            parent: NIL,
            red: true,
            min_vruntime: item.vruntime,
            min_slice: item.slice,
            max_slice: item.slice,
        };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Recomputes one node's aggregates from its item and children.
    fn recompute(&mut self, x: u32) {
        let n = &self.nodes[x as usize];
        let (mut mv, mut mn, mut mx) = (n.item.vruntime, n.item.slice, n.item.slice);
        for c in [n.left, n.right] {
            if c != NIL {
                let c = &self.nodes[c as usize];
                mv = vtime_min(mv, c.min_vruntime);
                mn = mn.min(c.min_slice);
                mx = mx.max(c.max_slice);
            }
        }
        let n = &mut self.nodes[x as usize];
        n.min_vruntime = mv;
        n.min_slice = mn;
        n.max_slice = mx;
    }

    fn propagate_up(&mut self, mut x: u32) {
        while x != NIL {
            self.recompute(x);
            x = self.nodes[x as usize].parent;
        }
    }

    /// Inserts `item` (`__enqueue_entity`); equal deadlines go right.
    pub fn insert(&mut self, item: TreeItem) -> NodeRef {
        let z = self.alloc(item);
        let mut parent = NIL;
        let mut cur = self.root;
        let mut leftmost = true;
        let mut go_left = false;
        while cur != NIL {
            parent = cur;
            go_left = vtime_before(item.deadline, self.nodes[cur as usize].item.deadline);
            if go_left {
                cur = self.nodes[cur as usize].left;
            } else {
                cur = self.nodes[cur as usize].right;
                leftmost = false;
            }
        }
        self.nodes[z as usize].parent = parent;
        if parent == NIL {
            self.root = z;
        } else if go_left {
            self.nodes[parent as usize].left = z;
        } else {
            self.nodes[parent as usize].right = z;
        }
        if leftmost {
            self.leftmost = z;
        }
        self.len += 1;
        self.propagate_up(z);
        self.insert_fixup(z);
        self.debug_check();
        NodeRef(z)
    }

    /// Removes the node `r` (`__dequeue_entity`).
    pub fn remove(&mut self, r: NodeRef) -> TreeItem {
        let z = r.0;
        let item = self.nodes[z as usize].item;
        if self.leftmost == z {
            self.leftmost = self.successor(z);
        }
        let (zl, zr) = (self.nodes[z as usize].left, self.nodes[z as usize].right);
        let mut y_red = self.nodes[z as usize].red;
        let x;
        let x_parent;
        if zl == NIL {
            x = zr;
            x_parent = self.nodes[z as usize].parent;
            self.transplant(z, zr);
        } else if zr == NIL {
            x = zl;
            x_parent = self.nodes[z as usize].parent;
            self.transplant(z, zl);
        } else {
            let y = self.minimum(zr);
            y_red = self.nodes[y as usize].red;
            x = self.nodes[y as usize].right;
            if self.nodes[y as usize].parent == z {
                x_parent = y;
            } else {
                x_parent = self.nodes[y as usize].parent;
                self.transplant(y, x);
                self.nodes[y as usize].right = zr;
                self.nodes[zr as usize].parent = y;
            }
            self.transplant(z, y);
            self.nodes[y as usize].left = zl;
            self.nodes[zl as usize].parent = y;
            self.nodes[y as usize].red = self.nodes[z as usize].red;
        }
        self.propagate_up(x_parent);
        if !y_red {
            self.erase_fixup(x, x_parent);
        }
        self.free.push(z);
        self.len -= 1;
        self.debug_check();
        item
    }

    fn minimum(&self, mut x: u32) -> u32 {
        while self.nodes[x as usize].left != NIL {
            x = self.nodes[x as usize].left;
        }
        x
    }

    fn successor(&self, x: u32) -> u32 {
        let r = self.nodes[x as usize].right;
        if r != NIL {
            return self.minimum(r);
        }
        let mut x = x;
        let mut p = self.nodes[x as usize].parent;
        while p != NIL && self.nodes[p as usize].right == x {
            x = p;
            p = self.nodes[p as usize].parent;
        }
        p
    }

    fn transplant(&mut self, u: u32, v: u32) {
        let up = self.nodes[u as usize].parent;
        if up == NIL {
            self.root = v;
        } else if self.nodes[up as usize].left == u {
            self.nodes[up as usize].left = v;
        } else {
            self.nodes[up as usize].right = v;
        }
        if v != NIL {
            self.nodes[v as usize].parent = up;
        }
    }

    fn rotate_left(&mut self, x: u32) {
        let y = self.nodes[x as usize].right;
        let yl = self.nodes[y as usize].left;
        self.nodes[x as usize].right = yl;
        if yl != NIL {
            self.nodes[yl as usize].parent = x;
        }
        self.transplant(x, y);
        self.nodes[y as usize].left = x;
        self.nodes[x as usize].parent = y;
        self.recompute(x);
        self.recompute(y);
    }

    fn rotate_right(&mut self, x: u32) {
        let y = self.nodes[x as usize].left;
        let yr = self.nodes[y as usize].right;
        self.nodes[x as usize].left = yr;
        if yr != NIL {
            self.nodes[yr as usize].parent = x;
        }
        self.transplant(x, y);
        self.nodes[y as usize].right = x;
        self.nodes[x as usize].parent = y;
        self.recompute(x);
        self.recompute(y);
    }

    fn is_red(&self, x: u32) -> bool {
        x != NIL && self.nodes[x as usize].red
    }

    fn insert_fixup(&mut self, mut z: u32) {
        loop {
            let p = self.nodes[z as usize].parent;
            if !self.is_red(p) {
                break;
            }
            let g = self.nodes[p as usize].parent;
            if p == self.nodes[g as usize].left {
                let u = self.nodes[g as usize].right;
                if self.is_red(u) {
                    self.nodes[p as usize].red = false;
                    self.nodes[u as usize].red = false;
                    self.nodes[g as usize].red = true;
                    z = g;
                } else {
                    if z == self.nodes[p as usize].right {
                        z = p;
                        self.rotate_left(z);
                    }
                    let p = self.nodes[z as usize].parent;
                    let g = self.nodes[p as usize].parent;
                    self.nodes[p as usize].red = false;
                    self.nodes[g as usize].red = true;
                    self.rotate_right(g);
                }
            } else {
                let u = self.nodes[g as usize].left;
                if self.is_red(u) {
                    self.nodes[p as usize].red = false;
                    self.nodes[u as usize].red = false;
                    self.nodes[g as usize].red = true;
                    z = g;
                } else {
                    if z == self.nodes[p as usize].left {
                        z = p;
                        self.rotate_right(z);
                    }
                    let p = self.nodes[z as usize].parent;
                    let g = self.nodes[p as usize].parent;
                    self.nodes[p as usize].red = false;
                    self.nodes[g as usize].red = true;
                    self.rotate_left(g);
                }
            }
        }
        let r = self.root;
        self.nodes[r as usize].red = false;
    }

    fn erase_fixup(&mut self, mut x: u32, mut parent: u32) {
        while x != self.root && !self.is_red(x) {
            if parent == NIL {
                break;
            }
            if x == self.nodes[parent as usize].left {
                let mut w = self.nodes[parent as usize].right;
                if self.is_red(w) {
                    self.nodes[w as usize].red = false;
                    self.nodes[parent as usize].red = true;
                    self.rotate_left(parent);
                    w = self.nodes[parent as usize].right;
                }
                let (wl, wr) = (self.nodes[w as usize].left, self.nodes[w as usize].right);
                if !self.is_red(wl) && !self.is_red(wr) {
                    self.nodes[w as usize].red = true;
                    x = parent;
                    parent = self.nodes[x as usize].parent;
                } else {
                    if !self.is_red(wr) {
                        self.nodes[wl as usize].red = false;
                        self.nodes[w as usize].red = true;
                        self.rotate_right(w);
                        w = self.nodes[parent as usize].right;
                    }
                    self.nodes[w as usize].red = self.nodes[parent as usize].red;
                    self.nodes[parent as usize].red = false;
                    let wr = self.nodes[w as usize].right;
                    if wr != NIL {
                        self.nodes[wr as usize].red = false;
                    }
                    self.rotate_left(parent);
                    x = self.root;
                    parent = NIL;
                }
            } else {
                let mut w = self.nodes[parent as usize].left;
                if self.is_red(w) {
                    self.nodes[w as usize].red = false;
                    self.nodes[parent as usize].red = true;
                    self.rotate_right(parent);
                    w = self.nodes[parent as usize].left;
                }
                let (wl, wr) = (self.nodes[w as usize].left, self.nodes[w as usize].right);
                if !self.is_red(wl) && !self.is_red(wr) {
                    self.nodes[w as usize].red = true;
                    x = parent;
                    parent = self.nodes[x as usize].parent;
                } else {
                    if !self.is_red(wl) {
                        self.nodes[wr as usize].red = false;
                        self.nodes[w as usize].red = true;
                        self.rotate_left(w);
                        w = self.nodes[parent as usize].left;
                    }
                    self.nodes[w as usize].red = self.nodes[parent as usize].red;
                    self.nodes[parent as usize].red = false;
                    let wl = self.nodes[w as usize].left;
                    if wl != NIL {
                        self.nodes[wl as usize].red = false;
                    }
                    self.rotate_right(parent);
                    x = self.root;
                    parent = NIL;
                }
            }
        }
        if x != NIL {
            self.nodes[x as usize].red = false;
        }
    }

    /// Full structural check (debug builds, small trees): red-black
    /// properties, parent links, order, aggregates and the leftmost cache.
    fn debug_check(&self) {
        #[cfg(debug_assertions)]
        if self.len <= 64 {
            self.check().expect("timeline invariant");
        }
    }

    /// Checks every tree invariant; `Err` describes the first violation.
    pub fn check(&self) -> Result<(), String> {
        if self.root == NIL {
            return if self.len == 0 && self.leftmost == NIL {
                Ok(())
            } else {
                Err("empty tree with stale len/leftmost".into())
            };
        }
        if self.nodes[self.root as usize].red {
            return Err("red root".into());
        }
        let mut count = 0;
        self.check_node(self.root, NIL, &mut count)?;
        if count != self.len {
            return Err(format!("len {} but {} nodes", self.len, count));
        }
        if self.leftmost != self.minimum(self.root) {
            return Err("stale leftmost".into());
        }
        let items: Vec<_> = self.iter().collect();
        for w in items.windows(2) {
            if vtime_before(w[1].deadline, w[0].deadline) {
                return Err("keys out of order".into());
            }
        }
        Ok(())
    }

    /// Returns the black height of the subtree.
    fn check_node(&self, x: u32, parent: u32, count: &mut usize) -> Result<usize, String> {
        if x == NIL {
            return Ok(1);
        }
        *count += 1;
        let n = &self.nodes[x as usize];
        if n.parent != parent {
            return Err("bad parent link".into());
        }
        if n.red && (self.is_red(n.left) || self.is_red(n.right)) {
            return Err("red node with red child".into());
        }
        let lh = self.check_node(n.left, x, count)?;
        let rh = self.check_node(n.right, x, count)?;
        if lh != rh {
            return Err("unequal black heights".into());
        }
        let mut mv = n.item.vruntime;
        let (mut mn, mut mx) = (n.item.slice, n.item.slice);
        for c in [n.left, n.right] {
            if c != NIL {
                let c = &self.nodes[c as usize];
                mv = vtime_min(mv, c.min_vruntime);
                mn = mn.min(c.min_slice);
                mx = mx.max(c.max_slice);
            }
        }
        if (mv, mn, mx) != (n.min_vruntime, n.min_slice, n.max_slice) {
            return Err("stale aggregate".into());
        }
        Ok(lh + usize::from(!n.red))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn item(id: u32, deadline: u64, vruntime: u64, slice: u64) -> TreeItem {
        TreeItem {
            id: EntityId(id),
            deadline,
            vruntime,
            slice,
        }
    }

    #[test]
    fn equal_deadlines_keep_insertion_order() {
        let mut t = Timeline::new();
        t.insert(item(1, 10, 0, 1));
        t.insert(item(2, 10, 0, 1));
        t.insert(item(3, 5, 0, 1));
        t.insert(item(4, 10, 0, 1));
        let ids: Vec<u32> = t.iter().map(|i| i.id.0).collect();
        assert_eq!(ids, vec![3, 1, 2, 4]);
        assert_eq!(t.first().unwrap().id, EntityId(3));
    }

    #[test]
    fn keys_compare_across_wrap() {
        let mut t = Timeline::new();
        t.insert(item(1, 5, 0, 1));
        t.insert(item(2, u64::MAX - 5, 0, 1));
        assert_eq!(t.first().unwrap().id, EntityId(2));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, u64, u64),
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..64, 0u64..64, 1u64..8).prop_map(|(d, v, s)| Op::Insert(d, v, s)),
            (0usize..64).prop_map(Op::Remove),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn matches_a_sorted_model(ops in prop::collection::vec(op(), 1..200)) {
            let mut t = Timeline::new();
            // Model: (deadline, insertion seq, item, node).
            let mut model: Vec<(u64, u64, TreeItem, NodeRef)> = Vec::new();
            let mut seq = 0;
            for o in ops {
                match o {
                    Op::Insert(d, v, s) => {
                        let it = item(seq as u32, d, v, s);
                        let r = t.insert(it);
                        model.push((d, seq, it, r));
                        seq += 1;
                    }
                    Op::Remove(i) if !model.is_empty() => {
                        let (_, _, it, r) = model.remove(i % model.len());
                        prop_assert_eq!(t.remove(r), it);
                    }
                    Op::Remove(_) => {}
                }
                prop_assert!(t.check().is_ok(), "{:?}", t.check());
                model.sort_by_key(|m| (m.0, m.1));
                let got: Vec<_> = t.iter().collect();
                let want: Vec<_> = model.iter().map(|m| m.2).collect();
                prop_assert_eq!(&got, &want);
                // The heap search finds the first item (in key order) that
                // satisfies a monotone eligibility predicate.
                for limit in [0u64, 10, 30, 63] {
                    let found = t.search_eligible(|v| v <= limit);
                    let expect = want.iter().find(|i| i.vruntime <= limit).copied();
                    prop_assert_eq!(found, expect);
                }
                if let Some((mv, mn, mx)) = t.aggregates() {
                    prop_assert_eq!(mv, want.iter().map(|i| i.vruntime).min().unwrap());
                    prop_assert_eq!(mn, want.iter().map(|i| i.slice).min().unwrap());
                    prop_assert_eq!(mx, want.iter().map(|i| i.slice).max().unwrap());
                }
            }
        }
    }
}
