package store

// names interns the routes and spec digests of a shard's records: a
// store holds the records of a few rules, each with one spec digest and
// one route or a few, so an entry keeps a 4-byte reference to its pair
// rather than two strings (32 bytes, and two pointers for the collector
// to follow). Each pair counts the entries that refer to it and is
// forgotten with the last, so that routes taken from paths cannot pile
// up. The caller holds the shard's lock.
type names struct {
	pairs []namePair // a reference is an index + 1; 0 is the empty pair
	refs  []int      // entries referring to each pair
	index map[namePair]uint32
	free  []uint32 // references of forgotten pairs, for reuse
	last  uint32   // the pair referred to last, tried first: a hint
}

// namePair is a record's Route and SpecDigest.
type namePair struct{ route, digest string }

// ref returns the reference of the pair (route, digest), counting one
// more entry that refers to it.
func (n *names) ref(route, digest string) uint32 {
	p := namePair{route, digest}
	if p == (namePair{}) {
		return 0
	}
	r := n.last
	if r == 0 || n.pairs[r-1] != p {
		r = n.index[p]
	}
	if r == 0 {
		if k := len(n.free); k > 0 {
			r, n.free = n.free[k-1], n.free[:k-1]
			n.pairs[r-1] = p
		} else {
			n.pairs, n.refs = append(n.pairs, p), append(n.refs, 0)
			r = uint32(len(n.pairs))
		}
		if n.index == nil {
			n.index = make(map[namePair]uint32)
		}
		n.index[p] = r
	}
	n.refs[r-1]++
	n.last = r
	return r
}

// release counts one entry fewer that refers to r, and forgets its pair
// with the last.
func (n *names) release(r uint32) {
	if r == 0 {
		return
	}
	if n.refs[r-1]--; n.refs[r-1] > 0 {
		return
	}
	delete(n.index, n.pairs[r-1])
	n.pairs[r-1] = namePair{}
	n.free = append(n.free, r) // last may stay: ref compares its pair
}

// pair returns the pair of reference r.
func (n *names) pair(r uint32) namePair {
	if r == 0 {
		return namePair{}
	}
	return n.pairs[r-1]
}
