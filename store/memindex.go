package store

import "math/bits"

// index maps the storage keys of a shard's entries to their slots: an
// open-addressing table with linear probing over (hash, slot) cells. It
// holds no pointer, so the garbage collector never reads it (a
// map[string]int32 of a million keys is a million strings to mark), and it
// keeps each key's hash, so growing it hashes no key again. The keys
// themselves are the entries' StorageKey: a probe compares the hash first
// and the key only on a match.
type index struct {
	cells []cell // a power of two long, or nil
	n     int    // cells in use
	shift uint8  // 64 - log2(len(cells)): a hash's top bits are its home
}

// cell is one position of an index. Slot 0 marks an empty cell, so a
// zeroed table is empty.
type cell struct {
	hash uint64
	slot int32 // the entry's slot + 1
}

// minCells is the size of a shard's first table.
const minCells = 16

// home returns the cell where a probe for h starts. The top bits are used
// because the low bits of a primary key's hash choose its shard.
func (ix *index) home(h uint64) int { return int(h >> ix.shift) }

// find returns the slot of the entry under key, whose hash is h, or -1.
// The caller holds sh.mu.
func (sh *shard) find(h uint64, key string) int32 {
	ix := &sh.ix
	if ix.n == 0 {
		return -1
	}
	mask := len(ix.cells) - 1
	for i := ix.home(h); ; i = (i + 1) & mask {
		c := ix.cells[i]
		if c.slot == 0 {
			return -1
		}
		if c.hash == h && sh.entry(c.slot-1).rec.StorageKey == key {
			return c.slot - 1
		}
	}
}

// add indexes slot under h; the caller knows that no entry is indexed
// under the key. At most three quarters of the cells are in use, so
// probes stay short and always end at an empty cell.
func (ix *index) add(h uint64, slot int32) {
	if (ix.n+1)*4 > len(ix.cells)*3 {
		ix.grow()
	}
	mask := len(ix.cells) - 1
	i := ix.home(h)
	for ix.cells[i].slot != 0 {
		i = (i + 1) & mask
	}
	ix.cells[i] = cell{hash: h, slot: slot + 1}
	ix.n++
}

// grow doubles the table (or makes the first one), placing every cell
// again by its kept hash.
func (ix *index) grow() {
	size := max(2*len(ix.cells), minCells)
	old := ix.cells
	ix.cells = make([]cell, size)
	ix.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, c := range old {
		if c.slot == 0 {
			continue
		}
		i := ix.home(c.hash)
		for ix.cells[i].slot != 0 {
			i = (i + 1) & mask
		}
		ix.cells[i] = c
	}
}

// remove unindexes slot, indexed under h. The cells after it that probed
// past it move back into the gap (deletion without tombstones), so a
// table that sees many removals probes no longer than a fresh one.
func (ix *index) remove(h uint64, slot int32) {
	mask := len(ix.cells) - 1
	i := ix.home(h)
	for ix.cells[i].slot != slot+1 {
		if ix.cells[i].slot == 0 {
			panic("store: memory index lost a slot") // the shard's own invariant, never input
		}
		i = (i + 1) & mask
	}
	for j := i; ; {
		j = (j + 1) & mask
		c := ix.cells[j]
		if c.slot == 0 {
			break
		}
		// c may fill the gap at i unless its home lies cyclically in
		// (i, j]: then a probe for it starts after i and would miss it.
		if k := ix.home(c.hash); (j-k)&mask >= (j-i)&mask {
			ix.cells[i] = c
			i = j
		}
	}
	ix.cells[i] = cell{}
	ix.n--
}
