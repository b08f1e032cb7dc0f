package idemhttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// Problem types of the answers the middleware gives itself, beside the
// engine's ([policy.TypeKeyReuse] and the others). Their URIs, under
// [policy.ProblemBase], are stable.
const (
	// TypeBodyTooLarge: the request body is larger than
	// Options.MaxRequestBody (413). The handler did not run.
	TypeBodyTooLarge = policy.ProblemBase + "request-body-too-large"
	// TypeInvalidBody: the request body is not strict JSON (400), with the
	// extension members line, column, offset and pointer locating the
	// problem. The handler did not run.
	TypeInvalidBody = policy.ProblemBase + "request-body-invalid"
	// TypeInvalidRequest: the request cannot be fingerprinted: a value the
	// rule requires is missing, or a declared query or header is invalid
	// (400), with the extension members part and name. The handler did not
	// run.
	TypeInvalidRequest = policy.ProblemBase + "request-invalid"
	// TypeTenantUnknown: the request's tenant cannot be determined (400).
	// The handler did not run.
	TypeTenantUnknown = policy.ProblemBase + "tenant-unknown"
	// TypeStoreUnavailable: the idempotency store could not be reached, or
	// is full (503, with Retry-After). The handler did not run.
	TypeStoreUnavailable = policy.ProblemBase + "idempotency-store-unavailable"
	// TypeStoreError: the record stored for the key cannot be used: it is
	// corrupt or contradicts its key (500). The handler did not run; an
	// operator must delete the key.
	TypeStoreError = policy.ProblemBase + "idempotency-store-error"
)

// problem is an RFC 9457 problem with the extension members this package
// uses.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Where an invalid body's problem is.
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Offset  *int64 `json:"offset,omitempty"`
	Pointer string `json:"pointer,omitempty"`
	// What an invalid request's problem is about.
	Part string `json:"part,omitempty"`
	Name string `json:"name,omitempty"`

	retryAfter int // seconds; 0 for none
}

// writeProblem answers with p.
func writeProblem(w http.ResponseWriter, p *problem) {
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: strings and numbers only
		b = []byte(`{"status":` + strconv.Itoa(p.Status) + `}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	w.WriteHeader(p.Status)
	w.Write(b)
}

func problemTooLarge(limit int64) *problem {
	return &problem{
		Type:   TypeBodyTooLarge,
		Title:  "Request body too large",
		Status: http.StatusRequestEntityTooLarge,
		Detail: "The request body is larger than " + strconv.FormatInt(limit, 10) + " bytes.",
	}
}

// problemRequest describes why a request could not be fingerprinted:
// a body that is not strict JSON (located by line, column, byte and JSON
// Pointer), or a missing or invalid value.
func problemRequest(body []byte, err error) *problem {
	var ce *canonical.Error
	if errors.As(err, &ce) {
		line, col := canonical.LineColumn(body, ce.Offset)
		off := ce.Offset
		detail := "The request body is not strict JSON: line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
		if ce.Pointer != "" {
			detail += ", at " + ce.Pointer
		}
		return &problem{
			Type:    TypeInvalidBody,
			Title:   "Request body is not valid JSON",
			Status:  http.StatusBadRequest,
			Detail:  detail + ": " + ce.Err.Error() + ".",
			Line:    line,
			Column:  col,
			Offset:  &off,
			Pointer: ce.Pointer,
		}
	}
	p := &problem{
		Type:   TypeInvalidRequest,
		Title:  "Request cannot be fingerprinted",
		Status: http.StatusBadRequest,
		Detail: "The request cannot be fingerprinted.",
	}
	var re *fingerprint.RequestError
	if errors.As(err, &re) {
		p.Part, p.Name = re.Part, re.Name
		p.Detail = upperFirst(strings.TrimPrefix(re.Error(), "fingerprint: ")) + "."
	}
	return p
}

func problemTenant() *problem {
	return &problem{
		Type:   TypeTenantUnknown,
		Title:  "Tenant unknown",
		Status: http.StatusBadRequest,
		Detail: "The request's tenant cannot be determined, so its idempotency key cannot be scoped.",
	}
}

func problemUnavailable(retryAfter int) *problem {
	return &problem{
		Type:       TypeStoreUnavailable,
		Title:      "Idempotency store unavailable",
		Status:     http.StatusServiceUnavailable,
		Detail:     "The request was not executed: its idempotency key could not be checked. Retry later with the same key.",
		retryAfter: retryAfter,
	}
}

func problemStoreError() *problem {
	return &problem{
		Type:   TypeStoreError,
		Title:  "Idempotency record unusable",
		Status: http.StatusInternalServerError,
		Detail: "The request was not executed: the record stored for its idempotency key cannot be used.",
	}
}

func upperFirst(s string) string {
	if s != "" && 'a' <= s[0] && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
