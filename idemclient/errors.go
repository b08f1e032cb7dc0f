package idemclient

import (
	"errors"
	"strconv"
)

// The errors an operation ends with, wrapped in an [*Error]; match them
// with errors.Is. http.Client wraps the error in a *url.Error, which
// errors.Is and errors.As see through.
var (
	// ErrKeyReused: the server says the operation's key was first used
	// with another request. It is never retried: retrying cannot succeed,
	// and a new key would be a new operation. [Error].Problem holds the
	// server's problem, when it sent one.
	ErrKeyReused = errors.New("idempotency key reused with another request")
	// ErrKeyExpired: the operation's key is older than [Options].Retention,
	// so the server may have forgotten it and would execute a retry again.
	// It was not sent again.
	ErrKeyExpired = errors.New("idempotency key older than its retention")
	// ErrBodyTooLarge: the request body is larger than [Options].MaxBody.
	// Nothing was sent.
	ErrBodyTooLarge = errors.New("request body too large to retry")
	// ErrBodyNotReplayable: the request's GetBody failed, so a retry could
	// not send the same bytes again. The attempts before were sent.
	ErrBodyNotReplayable = errors.New("request body cannot be sent again")
	// ErrKey: [Options].NewKey failed or minted an empty key. Nothing was
	// sent.
	ErrKey = errors.New("idempotency key cannot be minted")
)

// Error is how an operation ends when it does not end with an answer
// the caller should read: Err is one of the sentinels above, or the last
// transport error after the attempts ran out.
type Error struct {
	// Key is the operation's idempotency key; empty for a request sent
	// without one.
	Key string
	// Attempts is the number of attempts sent (0 when none was).
	Attempts int
	// Status is the status of the last answer; 0 when there was none.
	Status int
	// Problem is the last answer's RFC 9457 problem, when its body was
	// one; nil otherwise.
	Problem *Problem
	// Body is the first bytes (up to 64 KiB) of the last answer's body,
	// whatever its type: a Stripe error object, for example.
	Body []byte
	// Err is the cause.
	Err error
}

// Error returns "idemclient: " and the cause, with the status and the
// problem's type when there was an answer.
func (e *Error) Error() string {
	s := "idemclient: " + e.Err.Error()
	if e.Status != 0 {
		s += " (" + strconv.Itoa(e.Status)
		if e.Problem != nil && e.Problem.Type != "" {
			s += " " + e.Problem.Type
		}
		s += ")"
	}
	return s
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Problem is an RFC 9457 problem: the members a client reads. The zero
// value is an empty problem.
type Problem struct {
	// Type is the problem type's URI, Title its summary, Status the
	// answer's status, Detail this occurrence's explanation, Instance its
	// URI: the members RFC 9457, section 3.1, defines.
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
}
