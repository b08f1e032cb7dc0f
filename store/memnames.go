package store

import "unique"

// namePair is a record's Route and SpecDigest. An entry keeps them as a
// handle from the unique package, 8 bytes where two strings take 32: a
// store holds the records of a few rules, each with one spec digest and
// one route or a few, and a pair no entry refers to any more is
// reclaimed with the last handle to it.
type namePair struct{ route, digest string }

// names makes a shard's handles. It remembers the pair it made last:
// unique.Make hashes both strings each time, and one rule's records come
// in runs. The caller holds the shard's lock.
type names struct {
	last   namePair
	handle unique.Handle[namePair] // of last; zero until the first
}

// ref returns the handle of the pair (route, digest).
func (n *names) ref(route, digest string) unique.Handle[namePair] {
	p := namePair{route, digest}
	if p != n.last || n.handle == (unique.Handle[namePair]{}) {
		n.last, n.handle = p, unique.Make(p)
	}
	return n.handle
}
