"""The iteration order of Java's ``java.util.HashMap`` (JDK 8 and later) after keys are inserted
with ``computeIfAbsent``, which Paimon's bitmap file index writes its bitmaps in.

The map starts with 16 buckets and doubles when a call finds it over 3/4 full. A new key goes to
the head of its bucket's list; resizes split each list keeping its order; a list that reaches 8
keys makes the map resize while it has fewer than 64 buckets, else becomes a red-black tree
(``TreeNode``), ordered by hash then by the keys' ``compareTo``, whose node list a new key joins
right after its tree parent and whose root moves to the list's front; resizes split trees, turning
a part of 6 keys or fewer back into a list. Iteration visits the buckets in order and each bucket's
list.

:func:`hashmap_order` is the vectorised common case (no bucket ever reaches 8 keys);
:func:`simulate_order` replays the map key by key, trees included, and serves when a bucket does.
:func:`put_order` is the order after keys are inserted with ``put`` instead (a new key at the
tail of its bucket's list, the map grown after an insertion leaves it over 3/4 full), as the file
index container's column and type names are ordered (trees not modelled: a handful of names).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

_TREEIFY = 8
_UNTREEIFY = 6
_MIN_TREEIFY_CAPACITY = 64


def spread(hashes: np.ndarray) -> np.ndarray:
    """``HashMap.hash``: the hash code xor its high half, as uint32."""
    h = np.asarray(hashes, dtype=np.uint32)
    return h ^ (h >> np.uint32(16))


def hashmap_order(hashes: np.ndarray, resize_after_last: bool, order_keys: Callable[[], Sequence[Any]] | None = None) -> np.ndarray:
    """Indexes of keys inserted in this order (``hashes``: their ``hashCode()``, uint32) in the
    order the map visits them. ``resize_after_last``: whether a call came after the last key's
    insertion (it resizes the map when over its threshold). ``order_keys``: gives the keys as
    Python values ordered as their ``compareTo``; called only when a bucket reaches 8 keys (without
    it such a map raises ``ValueError``)."""
    n = len(hashes)
    h = spread(hashes)
    cap, threshold, j = 16, 12, 0
    while j < n:
        end = min(n, threshold + 1)
        buckets = h[:end] & np.uint32(cap - 1)
        if np.bincount(buckets, minlength=cap).max() < _TREEIFY:
            events = np.empty(0, dtype=np.int64)  # no bucket reaches 8 keys: no need for ranks
        else:
            events = np.flatnonzero(_bucket_ranks(buckets)[j:end] >= _TREEIFY - 1)
        if events.size:
            if cap >= _MIN_TREEIFY_CAPACITY:
                if order_keys is None:
                    raise ValueError("a bucket becomes a tree: the keys' order is needed")
                return simulate_order(hashes, resize_after_last, order_keys())
            j += int(events[0]) + 1
            cap, threshold = cap * 2, threshold * 2
            continue
        j = end
        if j < n:
            cap, threshold = cap * 2, threshold * 2
    if n > threshold and resize_after_last:
        cap *= 2
    return np.lexsort((-np.arange(n), h & np.uint32(cap - 1)))


def put_order(hashes: np.ndarray) -> np.ndarray:
    """Indexes of keys inserted with ``put`` in this order (``hashes``: their ``hashCode()``,
    uint32) in the order the map visits them: by bucket of the final capacity, keys of one
    bucket in insertion order. No bucket becoming a tree is assumed."""
    n = len(hashes)
    cap, threshold = 16, 12
    while n > threshold:
        cap, threshold = cap * 2, threshold * 2
    return np.lexsort((np.arange(n), spread(hashes) & np.uint32(cap - 1)))


def _bucket_ranks(buckets: np.ndarray) -> np.ndarray:
    """For each key, how many earlier keys share its bucket."""
    order = np.argsort(buckets, kind="stable")
    sorted_buckets = buckets[order]
    starts = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]])
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(buckets)]))
    ranks = np.empty(len(buckets), dtype=np.int64)
    ranks[order] = np.arange(len(buckets)) - group_start
    return ranks


# ---------------------------------------------------------------- the map, key by key


class _Node:
    __slots__ = ("hash", "key", "index", "next", "prev", "left", "right", "parent", "red", "tree")

    def __init__(self, hash_: int, key: Any, index: int, next_: _Node | None, tree: bool = False) -> None:
        self.hash, self.key, self.index, self.next, self.tree = hash_, key, index, next_, tree
        self.prev: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.parent: _Node | None = None
        self.red = False


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


class _Map:
    def __init__(self) -> None:
        self.table: list[_Node | None] = [None] * 16
        self.threshold = 12
        self.size = 0

    def insert(self, hash_: int, key: Any, index: int) -> None:
        """``computeIfAbsent`` of a key not in the map."""
        if self.size > self.threshold:
            self.resize()
        n = len(self.table)
        i = hash_ & (n - 1)
        first = self.table[i]
        if first is not None and first.tree:
            root = first
            while root.parent is not None:
                root = root.parent
            self._put_tree(root, hash_, key, index)
        else:
            count = 0
            node = first
            while node is not None:
                count += 1
                node = node.next
            self.table[i] = _Node(hash_, key, index, first)
            if count >= _TREEIFY - 1:
                self._treeify_bin(hash_)
        self.size += 1

    def order(self) -> list[int]:
        out = []
        for head in self.table:
            node = head
            while node is not None:
                out.append(node.index)
                node = node.next
        return out

    # -- resizing

    def resize(self) -> None:
        old = self.table
        old_cap = len(old)
        new_cap = old_cap * 2
        self.threshold *= 2
        self.table = [None] * new_cap
        for j, e in enumerate(old):
            if e is None:
                continue
            if e.next is None:
                self.table[e.hash & (new_cap - 1)] = e
            elif e.tree:
                self._split(e, j, old_cap)
            else:
                lo: list[_Node] = []
                hi: list[_Node] = []
                node: _Node | None = e
                while node is not None:
                    (lo if node.hash & old_cap == 0 else hi).append(node)
                    node = node.next
                for part, at in ((lo, j), (hi, j + old_cap)):
                    if part:
                        for a, b in zip(part, part[1:], strict=False):
                            a.next = b
                        part[-1].next = None
                        self.table[at] = part[0]

    def _split(self, head: _Node, index: int, bit: int) -> None:
        lo: list[_Node] = []
        hi: list[_Node] = []
        node: _Node | None = head
        while node is not None:
            (lo if node.hash & bit == 0 else hi).append(node)
            node = node.next
        for part, at, other in ((lo, index, hi), (hi, index + bit, lo)):
            if not part:
                continue
            prev = None
            for x in part:
                x.prev = prev
                x.next = None
                if prev is not None:
                    prev.next = x
                prev = x
            if len(part) <= _UNTREEIFY:
                plain = [_Node(x.hash, x.key, x.index, None) for x in part]
                for a, b in zip(plain, plain[1:], strict=False):
                    a.next = b
                self.table[at] = plain[0]
            else:
                self.table[at] = part[0]
                if other:
                    self._treeify(part[0])

    # -- trees

    def _treeify_bin(self, hash_: int) -> None:
        n = len(self.table)
        if n < _MIN_TREEIFY_CAPACITY:
            self.resize()
            return
        index = hash_ & (n - 1)
        nodes = []
        e = self.table[index]
        while e is not None:
            nodes.append(_Node(e.hash, e.key, e.index, None, tree=True))
            e = e.next
        for a, b in zip(nodes, nodes[1:], strict=False):
            a.next = b
            b.prev = a
        self.table[index] = nodes[0]
        self._treeify(nodes[0])

    def _treeify(self, head: _Node) -> None:
        root: _Node | None = None
        x: _Node | None = head
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p = root
                while True:
                    d = _direction(x, p)
                    child = p.left if d <= 0 else p.right
                    if child is None:
                        x.parent = p
                        if d <= 0:
                            p.left = x
                        else:
                            p.right = x
                        root = _balance_insertion(root, x)
                        break
                    p = child
            x = nxt
        assert root is not None
        self._move_root_to_front(root)

    def _put_tree(self, root: _Node, hash_: int, key: Any, index: int) -> None:
        x = _Node(hash_, key, index, None, tree=True)
        p = root
        while True:
            d = _direction(x, p)
            child = p.left if d <= 0 else p.right
            if child is None:
                xpn = p.next
                x.next = xpn
                if d <= 0:
                    p.left = x
                else:
                    p.right = x
                p.next = x
                x.parent = x.prev = p
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(_balance_insertion(root, x))
                return
            p = child

    def _move_root_to_front(self, root: _Node) -> None:
        index = root.hash & (len(self.table) - 1)
        first = self.table[index]
        if root is not first:
            self.table[index] = root
            rp, rn = root.prev, root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None


def _direction(x: _Node, p: _Node) -> int:
    """Where ``x`` goes below ``p``: by signed hash, then by key (distinct keys never tie)."""
    xh, ph = _signed(x.hash), _signed(p.hash)
    if ph > xh:
        return -1
    if ph < xh:
        return 1
    return -1 if x.key < p.key else 1


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    left = p.left
    if left is not None:
        lr = p.left = left.right
        if lr is not None:
            lr.parent = p
        pp = left.parent = p.parent
        if pp is None:
            root = left
            left.red = False
        elif pp.right is p:
            pp.right = left
        else:
            pp.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def simulate_order(hashes: np.ndarray, resize_after_last: bool, order_keys: Sequence[Any]) -> np.ndarray:
    """:func:`hashmap_order` by replaying the map key by key (trees included)."""
    m = _Map()
    for index, (h, key) in enumerate(zip(spread(hashes).tolist(), order_keys, strict=True)):
        m.insert(h, key, index)
    if m.size > m.threshold and resize_after_last:
        m.resize()
    return np.array(m.order(), dtype=np.int64)
