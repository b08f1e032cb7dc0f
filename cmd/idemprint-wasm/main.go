//go:build wasip1

// Command idemprint-wasm is the WebAssembly reactor module behind the npm
// package @idemprint/fingerprint (js/): the fingerprint package compiled
// for GOOS=wasip1, with the exports below. Build it with js/build.sh:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o js/idemprint.wasm ./cmd/idemprint-wasm
//
// The host calls _initialize once, then the exports. Inputs and outputs
// pass through one buffer that the module owns: the host asks for room
// with idemprint_buffer, writes its input there, and reads the output from
// the same place. A result r of a call is a length: r >= 0 bytes of
// output, or for an error -r bytes of JSON (fpwire.Error.AppendJSON).
// The module keeps a buffer of up to keepBytes between calls; a larger one
// lives only until the next call asks for less, so a large body's memory
// is released after it, to be reused by the module's heap.
package main

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/fpwire"
)

func main() {}

const (
	baseBytes = 64 << 10 // the buffer's least size
	keepBytes = 1 << 20  // the largest buffer kept between calls
)

var (
	buf     = make([]byte, baseBytes)
	handles = map[int32]*fingerprint.Fingerprinter{}
	next    int32
)

// idemprint_buffer returns the address of the buffer, with room for at
// least max(n, 64 KiB) bytes. A call may move the buffer, so the host asks
// again before each call whose input is larger than that room, and before
// the next call after one for more than 1 MiB (which releases it).
//
//go:wasmexport idemprint_buffer
func idemprintBuffer(n uint32) uint32 {
	switch {
	case int(n) > len(buf):
		buf = make([]byte, n)
	case len(buf) > keepBytes && int(n) <= baseBytes:
		buf = make([]byte, baseBytes)
	}
	return uint32(uintptr(unsafe.Pointer(&buf[0])))
}

// idemprint_output returns the address of the buffer, where the output of
// the last call is, without changing it.
//
//go:wasmexport idemprint_output
func idemprintOutput() uint32 { return uint32(uintptr(unsafe.Pointer(&buf[0]))) }

// output writes out to the buffer, growing it when out is larger, and
// returns its length, negated for an error.
func output(out []byte, isErr bool) int32 {
	if len(out) > len(buf) {
		buf = make([]byte, len(out))
	}
	copy(buf, out)
	if isErr {
		return -int32(len(out))
	}
	return int32(len(out))
}

func fail(err error) int32 {
	e := fpwire.Classify(err)
	return output(e.AppendJSON(nil), true)
}

// guard turns a panic into an error result, so a bug reached by some input
// reports itself instead of stopping the module.
func guard(r *int32) {
	if v := recover(); v != nil {
		*r = fail(fmt.Errorf("internal error: %v", v))
	}
}

// idemprint_compile compiles the spec in the first n bytes of the buffer,
// in its JSON form, and returns a handle (> 0) or an error.
//
//go:wasmexport idemprint_compile
func idemprintCompile(n uint32) (r int32) {
	defer guard(&r)
	s, err := fpwire.ParseSpec(buf[:n])
	if err != nil {
		return fail(err)
	}
	f, err := fingerprint.Compile(s)
	if err != nil {
		return fail(err)
	}
	if next == 1<<31-1 {
		return fail(errors.New("too many specs compiled"))
	}
	next++
	handles[next] = f
	return next
}

// idemprint_release forgets a handle.
//
//go:wasmexport idemprint_release
func idemprintRelease(h int32) { delete(handles, h) }

// idemprint_digest writes the spec digest of a handle to the buffer.
//
//go:wasmexport idemprint_digest
func idemprintDigest(h int32) (r int32) {
	defer guard(&r)
	f, ok := handles[h]
	if !ok {
		return fail(errors.New("unknown handle"))
	}
	return output([]byte(f.SpecDigest()), false)
}

// idemprint_sum fingerprints the request frame (fpwire.ReadFrame) in the
// first n bytes of the buffer and writes the fingerprint's text form, or
// with intent != 0 its intent document, to the buffer.
//
//go:wasmexport idemprint_sum
func idemprintSum(h int32, n uint32, intent uint32) (r int32) {
	defer guard(&r)
	f, ok := handles[h]
	if !ok {
		return fail(errors.New("unknown handle"))
	}
	req, err := fpwire.ReadFrame(buf[:n])
	if err != nil {
		return fail(err)
	}
	if intent != 0 {
		doc, err := f.AppendIntent(nil, req)
		if err != nil {
			return fail(err)
		}
		return output(doc, false)
	}
	fp, err := f.Sum(req)
	if err != nil {
		return fail(err)
	}
	// The text form is 53 bytes and the buffer at least baseBytes: it is
	// written in place, over the frame Sum has finished with.
	out, _ := fp.AppendText(buf[:0])
	return int32(len(out))
}
