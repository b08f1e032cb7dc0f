package idemhttp

import (
	"bufio"
	"net"
	"net/http"
)

// capture is the ResponseWriter an executing handler writes to: it passes
// everything on to the client and keeps a copy, up to a limit, for the
// record. Streaming keeps working: Flush flushes, and
// [http.ResponseController] reaches the client's writer through Unwrap.
//
// A write the client cannot take (it disconnected) is still kept and
// reported to the handler as done, so that the handler finishes its
// answer and the complete response is stored: the retry that follows the
// disconnect replays it instead of executing again.
type capture struct {
	w        http.ResponseWriter
	limit    int64
	status   int         // the final status, 0 until written
	header   http.Header // the header sent with it, for the record
	snapped  bool        // header is a copy, made when the handler asked for the map after the status
	body     []byte
	size     int64 // bytes written by the handler
	overflow bool  // size > limit: body is not the whole response
	hijacked bool
	clientOK bool // writes reach the client

	disposition disposition // what the handler said about its reservation
}

// init readies c for a handler writing to w, keeping its buffer.
func (c *capture) init(w http.ResponseWriter, limit int64) {
	*c = capture{w: w, limit: limit, body: c.body[:0], clientOK: true}
}

// reset empties c for its exchange's next request, keeping a buffer that
// is not too large.
func (c *capture) reset() {
	body := c.body[:0]
	if cap(body) > maxPooled {
		body = nil
	}
	*c = capture{body: body}
}

// Header returns the client's header map, as the handler expects. Once
// the status is written, net/http sends changes to that map only as
// trailers (names declared in Trailer, or prefixed with
// [http.TrailerPrefix]); the record must keep what was sent as the header,
// so the first call after the status copies the map for the record, and
// the handler keeps the client's map, trailers and all. Trailers reach the
// client but are not kept: a replay has none.
func (c *capture) Header() http.Header {
	if c.status != 0 && !c.snapped {
		c.header, c.snapped = c.w.Header().Clone(), true
	}
	return c.w.Header()
}

// WriteHeader sends the status; an informational one (1xx) is passed on
// and is not the response's.
func (c *capture) WriteHeader(status int) {
	if c.status != 0 || c.hijacked {
		return // as net/http: only the first final status counts
	}
	c.w.WriteHeader(status)
	if status >= 100 && status < 200 {
		return
	}
	c.status = status
	c.header = c.w.Header()
}

// Write keeps p and passes it on.
func (c *capture) Write(p []byte) (int, error) {
	if c.hijacked {
		return 0, http.ErrHijacked
	}
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.size += int64(len(p))
	switch {
	case c.overflow:
	case c.size > c.limit:
		c.overflow = true
		c.body = c.body[:0]
	default:
		c.body = append(c.body, p...)
	}
	if c.clientOK {
		if _, err := c.w.Write(p); err != nil {
			c.clientOK = false
		}
	}
	return len(p), nil
}

// Flush sends what was written so far.
func (c *capture) Flush() { c.FlushError() }

// FlushError sends what was written so far; [http.ResponseController]
// calls it.
func (c *capture) FlushError() error {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.clientOK {
		return nil
	}
	return http.NewResponseController(c.w).Flush()
}

// Hijack hands the connection to the handler. The middleware then knows
// nothing of the response: the request is completed as executed, with its
// response not kept, so that a retry is told so and never executes again.
func (c *capture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(c.w).Hijack()
	if err == nil {
		c.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the client's ResponseWriter, for [http.ResponseController].
func (c *capture) Unwrap() http.ResponseWriter { return c.w }
