package store

// ends orders a shard's records by the end of their life, so that
// sweeping finds the ended ones without visiting the others. It is lazy:
// a record whose end changes gets a new item, and a removed record keeps
// its items; an item is stale when its slot's entry no longer ends when
// the item says, and stale items are dropped as they come to the front
// or when they outnumber the records.
//
// Items go into runs, queues whose ends never decrease, where one fits:
// with one TTL and a clock that moves on, every new end is the latest,
// so a record costs an append and a pop from the front, and no item is
// ever moved. An item that fits no run (ends before every run's last, as
// with several TTLs beyond endRuns or a clock stepping back) goes to a
// binary heap. Neither reads an entry to place an item, where a heap
// that told each entry its place wrote to two entries, two cache misses
// in a large store, per level an item moved.
type ends struct {
	// n is the number of items held; see trim for limit.
	n, limit int
	// first is at most the end of every item, so that most sweeps, finding
	// nothing ended, look at no run: push lowers it, and popEnded raises
	// it to the front's end.
	first int64
	// k is the number of runs in use: runs[:k] hold items, runs[k:]
	// none, so that with one TTL only the first is ever looked at.
	k    int
	runs [endRuns]endRun
	heap []endItem // items that fit no run, a binary min-heap by end
}

// endRuns is the number of runs: a shard whose rules have up to this many
// TTLs sweeps without a heap, as long as its clock moves on.
const endRuns = 4

// endBlock is the number of items of a run's block: 8 KiB of them.
const endBlock = 512

// minEndLimit is the least number of items ends holds before compacting:
// a small shard does not compact for every few stale items.
const minEndLimit = 1024

// endItem says that the record in slot ends at end, in Unix
// microseconds, unless it is stale.
type endItem struct {
	end  int64
	slot int32
}

// endRun is a queue of items in order of end, in blocks of endBlock: it
// grows without copying items and gives its blocks back as it empties.
type endRun struct {
	blocks []*[endBlock]endItem
	head   int // the first item's place in blocks[0]
	n      int
	spare  *[endBlock]endItem // a block kept for reuse, so that a run moving across a boundary does not allocate each time
}

// at returns the run's i-th item, i < r.n.
func (r *endRun) at(i int) *endItem {
	j := uint(i + r.head) // unsigned: the division is a shift
	return &r.blocks[j/endBlock][j%endBlock]
}

func (r *endRun) last() *endItem { return r.at(r.n - 1) }

func (r *endRun) push(it endItem) {
	if r.head+r.n == len(r.blocks)*endBlock {
		b := r.spare
		if b == nil {
			b = new([endBlock]endItem)
		}
		r.spare = nil
		r.blocks = append(r.blocks, b)
	}
	r.n++
	*r.at(r.n - 1) = it
}

// pop removes the first item and returns how many are left.
func (r *endRun) pop() int {
	r.head++
	r.n--
	if r.head == endBlock || r.n == 0 {
		r.dropFront()
	}
	return r.n
}

// dropFront gives back the blocks before the first item (all of them in
// an empty run), keeping one as the spare.
func (r *endRun) dropFront() {
	k := r.head / endBlock
	if r.n == 0 {
		k = len(r.blocks)
	}
	if k == 0 {
		return
	}
	if r.spare == nil {
		r.spare = r.blocks[0]
	}
	m := copy(r.blocks, r.blocks[k:])
	clear(r.blocks[m:])
	r.blocks = r.blocks[:m]
	r.head -= k * endBlock
	if r.n == 0 {
		r.head = 0
	}
}

// push adds the item of a record of slot that ends at end.
func (s *ends) push(sh *shard, end int64, slot int32) {
	it := endItem{end, slot}
	// The run whose last end is the latest not after end keeps the runs
	// apart: items of one TTL keep to one run.
	best := -1
	var bestEnd int64
	for i := range s.k {
		if e := s.runs[i].last().end; e <= end && (best < 0 || e > bestEnd) {
			best, bestEnd = i, e
		}
	}
	switch {
	case best >= 0:
		s.runs[best].push(it)
	case s.k < endRuns:
		s.runs[s.k].push(it)
		s.k++
	default:
		s.heap = append(s.heap, it)
		s.up(len(s.heap) - 1)
	}
	if s.n == 0 || end < s.first {
		s.first = end
	}
	s.n++
	s.trim(sh)
}

// trim compacts the items when they are more than their limit and more
// than twice the shard's records, each of which has a live item: some
// are stale then. A push calls it, and so does a removal, which makes
// items stale.
func (s *ends) trim(sh *shard) {
	if s.n > max(s.limit, minEndLimit) && s.n > 2*sh.ix.n {
		s.compact(sh)
	}
}

// change notes that the record of slot ends at end instead of was. When
// its item is the last of a run and the end moves later, as when the
// record a reservation just wrote is completed, the item moves with it:
// nothing is left stale.
func (s *ends) change(sh *shard, slot int32, was, end int64) {
	if end > was {
		for i := range s.k {
			if l := s.runs[i].last(); l.slot == slot && l.end == was {
				l.end = end
				return
			}
		}
	}
	s.push(sh, end, slot)
}

// popEnded removes and returns the first item when it ends by t, the
// time in Unix microseconds; ok is false when none does.
func (s *ends) popEnded(t int64) (it endItem, ok bool) {
	if s.n == 0 || s.first > t {
		return endItem{}, false
	}
	it, from := s.front()
	if it.end > t {
		s.first = it.end
		return endItem{}, false
	}
	s.pop(from)
	return it, true
}

// front returns the item that ends first and where it is: a run's index,
// or endRuns for the heap. There is one: s.n > 0.
func (s *ends) front() (it endItem, from int) {
	from = -1
	for i := range s.k {
		if f := *s.runs[i].at(0); from < 0 || f.end < it.end {
			it, from = f, i
		}
	}
	if len(s.heap) > 0 && (from < 0 || s.heap[0].end < it.end) {
		it, from = s.heap[0], endRuns
	}
	return it, from
}

// pop removes the first item of from, as front gave it.
func (s *ends) pop(from int) {
	s.n--
	if from < endRuns {
		if r := &s.runs[from]; r.pop() == 0 {
			s.retire(from)
		}
		return
	}
	last := len(s.heap) - 1
	s.heap[0] = s.heap[last]
	s.heap = s.heap[:last]
	s.down(0)
	if c := cap(s.heap); c > 2*endBlock && len(s.heap) < c/4 {
		s.heap = append([]endItem(nil), s.heap...) // give back what a burst grew
	}
}

// retire moves run i, now empty, past the runs in use, and lets its
// spare block go: a shard keeps no memory for runs it no longer uses.
func (s *ends) retire(i int) {
	s.k--
	s.runs[i], s.runs[s.k] = s.runs[s.k], s.runs[i]
	s.runs[s.k].spare = nil
}

// live reports whether it is the item of the record in its slot.
func (sh *shard) live(it endItem) bool {
	e := sh.entry(it.slot)
	return e.key != "" && e.end() == it.end
}

// compact drops every stale item, keeping the runs in order and the heap
// a heap, and sets the next limit to twice what is left, so that the work
// of a compaction is paid by as many pushes as it kept items, even where
// items of the same end are left twice for a record.
func (s *ends) compact(sh *shard) {
	s.n = 0
	for i := s.k - 1; i >= 0; i-- { // downward: retire swaps in a run already done
		r := &s.runs[i]
		k := 0
		for j := range r.n {
			if it := *r.at(j); sh.live(it) {
				*r.at(k) = it
				k++
			}
		}
		r.n = k
		r.dropFront()
		// Give back the blocks past the items kept, but one.
		if used := (r.head + r.n + endBlock - 1) / endBlock; used < len(r.blocks) {
			if r.spare == nil {
				r.spare = r.blocks[used]
			}
			clear(r.blocks[used:])
			r.blocks = r.blocks[:used]
		}
		if k == 0 {
			s.retire(i)
		}
		s.n += k
	}
	k := 0
	for _, it := range s.heap {
		if sh.live(it) {
			s.heap[k] = it
			k++
		}
	}
	clear(s.heap[k:])
	s.heap = s.heap[:k]
	for i := k/2 - 1; i >= 0; i-- {
		s.down(i)
	}
	s.n += k
	s.limit = 2 * s.n
}

func (s *ends) up(i int) {
	h := s.heap
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].end <= h[i].end {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (s *ends) down(i int) {
	h := s.heap
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if r := child + 1; r < len(h) && h[r].end < h[child].end {
			child = r
		}
		if h[i].end <= h[child].end {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}
