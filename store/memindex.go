package store

import "math/bits"

// index maps the storage keys of a shard's entries to their slots: an
// open-addressing table with linear probing over (tag, slot) cells. It
// holds no pointer, so the garbage collector never reads it (a
// map[string]int32 of a million keys is a million strings to mark), and
// each cell keeps the top half of its key's hash, which places it in
// tables of up to 2^32 cells, so growing hashes no key again. The keys
// themselves are the entries' keys: a probe compares the tag first and
// the key only on a match.
type index struct {
	cells []cell // a power of two long, or nil
	n     int    // cells in use
	shift uint8  // 32 - log2(len(cells)): a tag's top bits are its home
}

// cell is one position of an index, 8 bytes. Slot 0 marks an empty
// cell, so a zeroed table is empty.
type cell struct {
	tag  uint32 // the top 32 bits of the key's hash
	slot int32  // the entry's slot + 1
}

// tagOf returns the tag of a key whose hash is h.
func tagOf(h uint64) uint32 { return uint32(h >> 32) }

// minCells is the size of a shard's first table.
const minCells = 16

// home returns the cell where a probe for a tag starts. The hash's top
// bits are used because its low bits choose a primary key's shard.
func (ix *index) home(tag uint32) int { return int(tag >> ix.shift) }

// find returns the slot of the entry under key, whose hash is h, or -1.
// The caller holds sh.mu.
func (sh *shard) find(h uint64, key string) int32 {
	ix := &sh.ix
	if ix.n == 0 {
		return -1
	}
	mask, tag := len(ix.cells)-1, tagOf(h)
	for i := ix.home(tag); ; i = (i + 1) & mask {
		c := ix.cells[i]
		if c.slot == 0 {
			return -1
		}
		if c.tag == tag && sh.entry(c.slot-1).key == key {
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
	mask, tag := len(ix.cells)-1, tagOf(h)
	i := ix.home(tag)
	for ix.cells[i].slot != 0 {
		i = (i + 1) & mask
	}
	ix.cells[i] = cell{tag: tag, slot: slot + 1}
	ix.n++
}

// grow doubles the table (or makes the first one), placing every cell
// again by its kept tag.
func (ix *index) grow() {
	size := max(2*len(ix.cells), minCells)
	old := ix.cells
	ix.cells = make([]cell, size)
	// Write the new table whole before probing it: memory the process
	// never touched, read first, faults twice (the kernel maps its shared
	// zero page for the read, then replaces it for the write).
	clear(ix.cells)
	ix.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, c := range old {
		if c.slot == 0 {
			continue
		}
		i := ix.home(c.tag)
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
	i := ix.home(tagOf(h))
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
		if k := ix.home(c.tag); (j-k)&mask >= (j-i)&mask {
			ix.cells[i] = c
			i = j
		}
	}
	ix.cells[i] = cell{}
	ix.n--
}
