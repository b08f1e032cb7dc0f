//go:build wasip1

// Command idemprint-wasm is the WebAssembly reactor module behind the npm
// package @idemprint/fingerprint (js/): the fingerprint package compiled
// for GOOS=wasip1, with the exports below. Build it with js/build.sh:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o js/idemprint.wasm ./cmd/idemprint-wasm
//
// The host calls _initialize once, then the exports. Input and output pass
// through two buffers that the module owns: the host asks for room with
// idemprint_buffer and writes its input there; after a call it reads the
// output at the address idemprint_output returns. A result r of a call is
// a length: r >= 0 bytes of output, or for an error -r bytes of JSON
// (fpwire.Error.AppendJSON). Either buffer is kept between calls up to
// keepBytes; a larger one lives until the next call, so a large body's
// memory is released after it, for the module's heap to reuse.
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
	buf     = make([]byte, baseBytes) // input
	out     = make([]byte, 0, 4<<10)  // output
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

// idemprint_output returns the address of the output of the last call.
//
//go:wasmexport idemprint_output
func idemprintOutput() uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out)))) }

// output makes b the output, and returns its length, negated for an
// error. An output of more than keepBytes is not kept for the next call.
func output(b []byte, isErr bool) int32 {
	if len(b) > 0 && unsafe.SliceData(b) != unsafe.SliceData(out) {
		out = append(out[:0], b...)
	} else {
		out = b
	}
	n := int32(len(out))
	if isErr {
		return -n
	}
	return n
}

func fail(err error) int32 {
	e := fpwire.Classify(err)
	return output(e.AppendJSON(nil), true)
}

// begin starts a call that writes an output: an output of more than
// keepBytes, which the host has read by now, is released.
func begin() {
	if cap(out) > keepBytes {
		out = make([]byte, 0, 4<<10)
	}
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
	begin()
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
	begin()
	defer guard(&r)
	f, ok := handles[h]
	if !ok {
		return fail(errors.New("unknown handle"))
	}
	return output([]byte(f.SpecDigest()), false)
}

// idemprint_document writes the intent document of the request frame
// (fpwire.ReadFrame) in the first n bytes of the buffer to the output. The
// host hashes it with its own SHA-256: the fingerprint is the SHA-256 of
// "idemprint/fingerprint/v1\n", the spec digest, "\n" and this document
// (docs/fingerprint-v1.md), and Node's SHA-256 runs several times faster
// than Go's portable one does in WebAssembly.
//
//go:wasmexport idemprint_document
func idemprintDocument(h int32, n uint32) (r int32) {
	begin()
	defer guard(&r)
	f, ok := handles[h]
	if !ok {
		return fail(errors.New("unknown handle"))
	}
	req, err := fpwire.ReadFrame(buf[:n])
	if err != nil {
		return fail(err)
	}
	doc, err := f.AppendIntent(out[:0], req)
	if err != nil {
		return fail(err)
	}
	return output(doc, false)
}
