package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Input is one log to read.
type Input struct {
	// Name names the log in the report and in errors.
	Name string
	// R reads the log: JSON Lines or a HAR file, either possibly gzipped
	// (told apart by their content, not by a name).
	R io.Reader
	// Size is the number of bytes R will give, as stored (compressed when
	// it is), or -1 when unknown; it only serves the progress reports.
	Size int64
}

// Formats of a log, as [InputSummary] names them.
const (
	FormatJSONL = "jsonl"
	FormatHAR   = "har"
)

// batchBytes and batchRecords bound a batch: what one worker parses and
// fingerprints in one go.
const (
	batchBytes   = 128 << 10
	batchRecords = 256
)

// batch is a run of consecutive requests of one input, read by the
// reader, parsed by a worker and decided by the merger in order.
type batch struct {
	seq   int64 // position among all batches
	input int32
	har   bool
	data  []byte
	recs  []record
	items []item // the workers' results, one per record
	// waiting counts the items the merger holds to decide later.
	waiting int
}

// batchPool keeps batches for reuse: once every request of a batch is
// decided, nothing refers to its memory any more (what outlives the
// decision, the state of a key and the records, is copied out of it).
var batchPool = sync.Pool{New: func() any { return &batch{data: make([]byte, 0, batchBytes)} }}

func newBatch(input int32, har bool) *batch {
	b := batchPool.Get().(*batch)
	b.input, b.har = input, har
	b.data, b.recs, b.items, b.waiting = b.data[:0], b.recs[:0], b.items[:0], 0
	return b
}

// release returns b to the pool when none of its requests waits.
func (b *batch) release() {
	if b.waiting == 0 && cap(b.data) <= 2*batchBytes {
		clear(b.items)
		batchPool.Put(b)
	}
}

// record is a line or a HAR entry in a batch.
type record struct {
	num        int64 // line (from 1) or entry index (from 0)
	start, end int   // in batch.data
	err        error // set by the reader: the record was not read
}

// reader reads the inputs, one after the other, into batches.
type reader struct {
	opts  *Options
	out   chan<- *batch
	seq   int64
	read  atomic.Int64 // bytes read of the inputs, as stored
	total int64        // -1: unknown
	sums  []InputSummary
	// progress is called after every batch, from the reader's goroutine.
	progress func(read int64)
}

// countingReader counts what it reads into n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// run reads every input, or stops at the first error, which is an input
// error (an *Error) or ctx's.
func (rd *reader) run(ctx context.Context, inputs []Input) error {
	for i, in := range inputs {
		br := bufio.NewReaderSize(countingReader{in.R, &rd.read}, 64<<10)
		where := Ref{Input: in.Name}
		if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return &Error{Where: where, Err: &detail{ErrFormat, "gzip: " + err.Error()}}
			}
			br = bufio.NewReaderSize(zr, 64<<10)
		}
		har, err := sniffHAR(br)
		if err != nil {
			return &Error{Where: where, Err: err}
		}
		rd.sums[i].Format = FormatJSONL
		if har {
			rd.sums[i].Format = FormatHAR
			err = rd.harEntries(ctx, int32(i), br)
		} else {
			err = rd.lines(ctx, int32(i), br)
		}
		if err != nil {
			var ae *Error
			if errors.As(err, &ae) || ctx.Err() != nil {
				return err
			}
			return &Error{Where: where, Err: &detail{ErrFormat, "reading: " + err.Error()}}
		}
	}
	return nil
}

// sniffHAR tells a HAR file (a JSON object whose first member is "log")
// from JSON Lines (an object per line, whose members are the envelope's).
func sniffHAR(br *bufio.Reader) (bool, error) {
	head, err := br.Peek(4096)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return false, &detail{ErrFormat, "reading: " + err.Error()}
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return false, nil // empty: no requests
	}
	if head[0] != '{' {
		return false, &detail{ErrFormat, "neither JSON Lines nor a HAR file: it does not start with '{'"}
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(`"log"`)), nil
}

// send passes a full batch on and starts the next one.
func (rd *reader) send(ctx context.Context, b *batch) (*batch, error) {
	if len(b.recs) > 0 {
		b.seq = rd.seq
		rd.seq++
		rd.sums[b.input].Requests += int64(len(b.recs))
		select {
		case rd.out <- b:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if rd.progress != nil {
			rd.progress(rd.read.Load())
		}
	}
	return newBatch(b.input, b.har), nil
}

// lines reads JSON Lines: one request a line; blank lines are skipped.
func (rd *reader) lines(ctx context.Context, in int32, br *bufio.Reader) error {
	b := newBatch(in, false)
	max := rd.opts.maxLine()
	var num int64
	var err error
	for {
		var line []byte
		line, err = br.ReadSlice('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if len(b.data)+len(line) > cap(b.data) && len(b.recs) > 0 {
			var serr error
			if b, serr = rd.send(ctx, b); serr != nil {
				return serr
			}
		}
		num++
		start := len(b.data)
		b.data = append(b.data, line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(b.data)-start <= max {
			line, err = br.ReadSlice('\n')
			b.data = append(b.data, line...)
		}
		if len(b.data)-start > max {
			b.data = b.data[:start]
			for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of the line
				_, err = br.ReadSlice('\n')
			}
			b.recs = append(b.recs, record{num: num, err: &detail{ErrTooLong, "longer than " + strconv.Itoa(max) + " bytes"}})
		} else {
			end := len(b.data)
			for end > start && (b.data[end-1] == '\n' || b.data[end-1] == '\r') {
				end--
			}
			if len(bytes.TrimSpace(b.data[start:end])) == 0 {
				b.data = b.data[:start]
			} else {
				b.recs = append(b.recs, record{num: num, start: start, end: end})
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(b.data) >= batchBytes || len(b.recs) >= batchRecords {
			if b, err = rd.send(ctx, b); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
	}
	_, err = rd.send(ctx, b)
	return err
}

// budgetReader fails once more than max bytes were read since the last
// reset: a HAR entry is decoded whole, so its size is bounded this way.
type budgetReader struct {
	r    io.Reader
	n    int
	max  int
	fail error
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, b.fail
	}
	n, err := b.r.Read(p)
	b.n += n
	return n, err
}

// harEntries streams the entries of a HAR file, one at a time, without
// holding the file: log.entries is read element by element, and every other
// member is skipped.
func (rd *reader) harEntries(ctx context.Context, in int32, br *bufio.Reader) error {
	max := rd.opts.maxLine()
	name := rd.sums[in].Name
	tooLong := &Error{Where: Ref{Input: name}, Err: &detail{ErrTooLong, "a HAR entry is longer than " + strconv.Itoa(max) + " bytes"}}
	budget := &budgetReader{r: br, max: 2 * max, fail: tooLong}
	dec := json.NewDecoder(budget)
	bad := func(msg string) error { return &Error{Where: Ref{Input: name}, Err: &detail{ErrFormat, msg}} }
	b := newBatch(in, true)
	var err error
	entries := false
	reset := func() { budget.n = 0 }
	if err := objectMembers(dec, reset, func(k string) (bool, error) {
		if k != "log" {
			return false, nil
		}
		return true, objectMembers(dec, reset, func(k string) (bool, error) {
			if k != "entries" {
				return false, nil
			}
			if entries {
				return true, bad(`more than one "entries" in "log"`)
			}
			entries = true
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return true, bad(`"entries" is not an array`)
			}
			for num := int64(0); dec.More(); num++ {
				reset()
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					if errors.Is(err, tooLong) {
						return true, &Error{Where: Ref{Input: name, Pointer: "/log/entries/" + strconv.FormatInt(num, 10)}, Err: tooLong.Err}
					}
					return true, bad("entry " + strconv.FormatInt(num, 10) + ": " + err.Error())
				}
				rec := record{num: num, start: len(b.data)}
				if len(raw) > max {
					rec.err = tooLong.Err
				} else {
					b.data = append(b.data, raw...)
				}
				rec.end = len(b.data)
				b.recs = append(b.recs, rec)
				if len(b.data) >= batchBytes || len(b.recs) >= batchRecords {
					if b, err = rd.send(ctx, b); err != nil {
						return true, err
					}
				}
			}
			_, err := dec.Token() // ']'
			return true, err
		})
	}); err != nil {
		var ae *Error
		if errors.As(err, &ae) || ctx.Err() != nil {
			return err
		}
		return bad(err.Error())
	}
	if !entries {
		return bad(`no "log"."entries"`)
	}
	_, err = rd.send(ctx, b)
	return err
}

// objectMembers reads a JSON object from dec, calling member for each
// name; member reads the value itself and returns true, or returns false
// to have it skipped. reset is called before each skipped value, which the
// size limit of an entry bounds too.
func objectMembers(dec *json.Decoder, reset func(), member func(name string) (bool, error)) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if err == nil {
			err = errors.New("not a JSON object where HAR has one")
		}
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		done, err := member(name)
		if err != nil {
			return err
		}
		if !done {
			reset()
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	_, err := dec.Token() // '}'
	return err
}
