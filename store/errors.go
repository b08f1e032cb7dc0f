package store

import "errors"

// Sentinel errors of a [Store]. Every error a Store returns is an [*Error]
// wrapping one of them (or, for a context that ended, the context's
// error), so callers test it with [errors.Is].
var (
	// ErrConflict reports a [Store.Write] whose condition no longer holds:
	// the stored generation is not the one the record replaces (another
	// request took over, completed or deleted it), or the guard's record
	// changed. Nothing was written; read the records again and decide
	// again.
	ErrConflict = errors.New("conflicting write")
	// ErrFull reports a store that has no room for another record and
	// would have to evict a live one to make it. Nothing was written: answer
	// the request, do not execute it.
	ErrFull = errors.New("store full")
	// ErrCorrupt reports a stored record that does not decode: it is
	// never replayed. Delete the key to recover.
	ErrCorrupt = errors.New("corrupt record")
	// ErrNotFound reports a [Store.Delete] of a key without a record.
	ErrNotFound = errors.New("no record")
	// ErrUnavailable reports a backend that could not be reached or
	// failed (a network fault, a restart, a terminated connection).
	// Whether the operation happened is unknown only for a write whose
	// reply was lost; retrying [Store.Write] is safe.
	ErrUnavailable = errors.New("store unavailable")
	// ErrInvalid reports an argument that breaks the contract: a
	// reservation that is not in flight, a lease that is not positive, a
	// record without a storage key.
	ErrInvalid = errors.New("invalid argument")
	// ErrContention reports an [Acquire] that lost the race to write a
	// decision too many times in a row.
	ErrContention = errors.New("too much contention")
)

// Error is the error of a [Store] operation. It wraps Kind, one of the
// sentinels, and Err, the cause from the backend (nil when there is
// none), so that both [errors.Is] and [errors.As] reach them.
type Error struct {
	// Op is the operation: "reserve", "write", "read", "delete", "ping",
	// "sweep" or "purge".
	Op string
	// StorageKey is the key the operation was about, or "".
	StorageKey string
	// Kind is one of the sentinel errors of this package, or
	// context.Canceled or context.DeadlineExceeded.
	Kind error
	// Err is the backend's error, or nil.
	Err error
}

// Error returns "store: OP: KIND" followed by ": " and the cause, if any.
// It does not include the storage key, which may be long or hold personal
// data; read StorageKey for it.
func (e *Error) Error() string {
	s := "store: " + e.Op + ": " + e.Kind.Error()
	if e.Err != nil && e.Err != e.Kind {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Kind and, when set, Err.
func (e *Error) Unwrap() []error {
	if e.Err == nil || e.Err == e.Kind {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
