package idemhttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/problem"
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

func problemTooLarge(limit int64) *problem.Details {
	return &problem.Details{
		Type:   TypeBodyTooLarge,
		Title:  "Request body too large",
		Status: http.StatusRequestEntityTooLarge,
		Detail: "The request body is larger than " + strconv.FormatInt(limit, 10) + " bytes.",
	}
}

// problemRequest describes why a request could not be fingerprinted:
// a body that is not strict JSON (located by line, column, byte and JSON
// Pointer), or a missing or invalid value.
func problemRequest(body []byte, err error) *problem.Details {
	var ce *canonical.Error
	if errors.As(err, &ce) {
		line, col := canonical.LineColumn(body, ce.Offset)
		off := ce.Offset
		detail := "The request body is not strict JSON: line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
		if ce.Pointer != "" {
			detail += ", at " + ce.Pointer
		}
		return &problem.Details{
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
	p := &problem.Details{
		Type:   TypeInvalidRequest,
		Title:  "Request cannot be fingerprinted",
		Status: http.StatusBadRequest,
		Detail: "The request cannot be fingerprinted.",
	}
	var re *fingerprint.RequestError
	if errors.As(err, &re) {
		p.Part, p.Name = re.Part, re.Name
		p.Detail = problem.Sentence(re.Error(), "fingerprint: ")
	}
	return p
}

func problemTenant() *problem.Details {
	return &problem.Details{
		Type:   TypeTenantUnknown,
		Title:  "Tenant unknown",
		Status: http.StatusBadRequest,
		Detail: "The request's tenant cannot be determined, so its idempotency key cannot be scoped.",
	}
}

func problemUnavailable(retryAfter int) *problem.Details {
	return &problem.Details{
		Type:       TypeStoreUnavailable,
		Title:      "Idempotency store unavailable",
		Status:     http.StatusServiceUnavailable,
		Detail:     "The request was not executed: its idempotency key could not be checked. Retry later with the same key.",
		RetryAfter: retryAfter,
	}
}

func problemStoreError() *problem.Details {
	return &problem.Details{
		Type:   TypeStoreError,
		Title:  "Idempotency record unusable",
		Status: http.StatusInternalServerError,
		Detail: "The request was not executed: the record stored for its idempotency key cannot be used.",
	}
}
