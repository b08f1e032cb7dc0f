package jsonwire

import (
	"slices"
	"unsafe"
)

// A Selector follows one run of [Select] through the values it cares
// about, so a caller can pick parts of a text in the pass that validates
// it. The encoder calls Enter before each value of the top level and of
// every container Enter asked to follow, Value with the canonical form of
// each value Enter asked for, and Leave after each value Enter did not
// skip, in document order.
type Selector interface {
	// Enter is told about the value that starts with the byte first: a
	// member of an object, whose name is given canonically escaped without
	// quotes (valid only during the call), or an element of an array at
	// index (then name is nil). index is -1 for a member and for the top
	// level, where name is nil too. With Follow and an object, names, when
	// not nil, lists the only member names (canonically escaped) for which
	// Enter is to be called: the others are skipped.
	Enter(name []byte, index int, first byte) (a Action, names []string)
	// Value receives the canonical form of the value Enter last asked
	// for with Emit; canon is valid only during the call.
	Value(canon []byte)
	// Leave ends the value that Enter was last called for and not left.
	Leave()
}

// Action is what a [Selector] wants of a value.
type Action uint8

const (
	Skip   Action = iota // nothing more: no Value, no Leave
	Pass                 // only Leave, after the value
	Follow               // Enter for each member or element of an array or object, then Leave
	Emit                 // Value with the value's canonical form, then Leave
)

// Select validates src as [Validate] does, reporting its values to sel as
// it reads them. It returns the *Error that Validate would return, or nil;
// after an error, sel may have seen only part of src.
func Select(o Options, src []byte, sel Selector) error {
	e := getEncoder(o)
	e.check, e.sel = true, sel
	var err error
	e.names, err = e.run(e.names[:0], src)
	putEncoder(e)
	return err
}

// enter tells the selector about the value starting with c and, when it
// asks for the value, starts writing it out. It reports whether the
// selector follows the value.
func (e *encoder) enter(dst []byte, c byte) (follow bool, names []string) {
	var nm []byte
	idx := -1
	leave := &e.leaveTop
	if n := len(e.frames); n > 0 {
		top := &e.frames[n-1]
		if top.object {
			m := name(dst, &e.members[top.cur])
			if top.names != nil && !slices.Contains(top.names, unsafe.String(unsafe.SliceData(m), len(m))) {
				return false, nil
			}
			// A copy: a slice of dst would make every caller's dst escape.
			e.name = append(e.name[:0], m...)
			nm = e.name
		} else {
			idx = top.count
		}
		leave = &top.leave
	}
	a, names := e.sel.Enter(nm, idx, c)
	*leave = a != Skip
	if a == Emit {
		e.check, e.emitting = false, true
		e.emitAt, e.emitDepth = len(dst), len(e.frames)
	}
	return a == Follow, names
}

// leaving reports whether the selector is to leave the value that ended.
func (e *encoder) leaving() bool {
	if n := len(e.frames); n > 0 {
		return e.frames[n-1].leave
	}
	return e.leaveTop
}

// leave runs after a value ends while one is written out or the selector
// is to leave it: a value being written out is complete
// when the depth is back to where it started, and the selector leaves the
// value that ended unless it skipped it.
func (e *encoder) leave(dst []byte) []byte {
	if e.emitting {
		if len(e.frames) != e.emitDepth {
			return dst
		}
		if len(e.pend) > 0 {
			dst = e.reorder(dst, e.emitAt)
			e.pend, e.spans = e.pend[:0], e.spans[:0]
		}
		e.value = append(e.value[:0], dst[e.emitAt:]...) // a copy, as for e.name
		e.sel.Value(e.value)
		dst = dst[:e.emitAt]
		e.check, e.emitting = true, false
	}
	leave := &e.leaveTop
	if n := len(e.frames); n > 0 {
		leave = &e.frames[n-1].leave
	}
	if *leave {
		*leave = false
		e.sel.Leave()
	}
	return dst
}
