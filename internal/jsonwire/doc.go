// Package jsonwire is the one JSON scanner of idemprint: the strict
// RFC 8259 reader and RFC 8785 encoder behind package canonical, the
// selecting pass that fingerprint.Sum makes over a body (Select), and the
// readers of already validated text that fingerprint's Diff and policy's
// tree use (SkipValue, AppendUnquoted).
//
// Errors are *Error values with the byte offset, the JSON Pointer and a
// sentinel; package canonical returns them as *canonical.Error, a struct
// with the same fields.
package jsonwire
