package fingerprint_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/idemprint/idemprint/fingerprint"
)

func TestHTTPRequest(t *testing.T) {
	withHost := Spec{Headers: []string{"Host", "X-Account"}}
	withQuery := Spec{Query: []string{"dryRun"}}
	body := []byte(`{"amountCents":1000}`)
	tests := []struct {
		name    string
		spec    Spec
		method  string
		target  string      // the request target, as on the request line
		host    string      // r.Host; "" keeps httptest's example.com
		header  http.Header // r.Header; nil keeps httptest's empty map
		want    Request     // Body is always body
		wantErr error       // a sentinel; the error is a *RequestError for the query
		reason  string
	}{{
		name:   "Path/Plain",
		method: "POST", target: "/v1/payments",
		want:   Request{Method: "POST", Path: "/v1/payments", Query: url.Values{}, Header: http.Header{}},
		reason: "the method and path as received",
	}, {
		name:   "Path/EscapedSpace",
		method: "POST", target: "/v1/accounts/acc%201/transfers",
		want:   Request{Method: "POST", Path: "/v1/accounts/acc%201/transfers", Query: url.Values{}, Header: http.Header{}},
		reason: "the escaped path counts; the policy matches the decoded one, /v1/accounts/acc 1/transfers",
	}, {
		name:   "Path/EscapedSlash",
		method: "POST", target: "/a%2Fb",
		want:   Request{Method: "POST", Path: "/a%2Fb", Query: url.Values{}, Header: http.Header{}},
		reason: "/a%2Fb and /a/b are different resources",
	}, {
		name:   "Query/Parsed",
		method: "POST", target: "/v1/refunds?x=1&dryRun=true&x=2",
		want:   Request{Method: "POST", Path: "/v1/refunds", Query: url.Values{"x": {"1", "2"}, "dryRun": {"true"}}, Header: http.Header{}},
		reason: "the query is split off the path and parsed, repeated values in order",
	}, {
		name: "Query/MalformedDeclared",
		spec: withQuery, method: "POST", target: "/v1/refunds?dryRun=%zz",
		wantErr: fingerprint.ErrInvalidRequest,
		reason:  "a declared parameter must not silently disappear",
	}, {
		name:   "Query/MalformedUndeclared",
		method: "POST", target: "/v1/refunds?dryRun=%zz&x=1",
		want:   Request{Method: "POST", Path: "/v1/refunds", Query: url.Values{"x": {"1"}}, Header: http.Header{}},
		reason: "no parameter counts, so the query is not checked",
	}, {
		name: "Host/Declared",
		spec: withHost, method: "POST", target: "/v1/payments", host: "api.example.com",
		header: http.Header{"X-Account": {"acc_1"}},
		want:   Request{Method: "POST", Path: "/v1/payments", Query: url.Values{}, Header: http.Header{"X-Account": {"acc_1"}, "Host": {"api.example.com"}}},
		reason: "net/http moves Host out of the header map; a declared Host comes from r.Host",
	}, {
		name: "Host/DeclaredAlreadyInHeader",
		spec: withHost, method: "POST", target: "/v1/payments", host: "api.example.com",
		header: http.Header{"Host": {"other.example.com"}},
		want:   Request{Method: "POST", Path: "/v1/payments", Query: url.Values{}, Header: http.Header{"Host": {"other.example.com"}}},
		reason: "a hand-built header map that has Host keeps it",
	}, {
		name:   "Host/Undeclared",
		method: "POST", target: "/v1/payments", host: "api.example.com",
		header: http.Header{"X-Account": {"acc_1"}},
		want:   Request{Method: "POST", Path: "/v1/payments", Query: url.Values{}, Header: http.Header{"X-Account": {"acc_1"}}},
		reason: "the header map is passed on as it is",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.host != "" {
				r.Host = tt.host
			}
			if tt.header != nil {
				r.Header = tt.header
			}
			before := r.Header.Clone()
			got, err := f.HTTPRequest(r, body)
			if diff := cmp.Diff(before, r.Header); diff != "" {
				t.Errorf("HTTPRequest changed r.Header (-before +after):\n%s", diff)
			}
			if tt.wantErr != nil {
				var re *fingerprint.RequestError
				if !errors.As(err, &re) || re.Part != "query" || !errors.Is(err, tt.wantErr) {
					t.Errorf("HTTPRequest(%s %s) = %+v, %v; want a *RequestError for the query wrapping %v (%s)", tt.method, tt.target, got, err, tt.wantErr, tt.reason)
				}
				if _, err := f.SumHTTP(r); !errors.Is(err, tt.wantErr) {
					t.Errorf("SumHTTP(%s %s) = %v; want the error of HTTPRequest", tt.method, tt.target, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("HTTPRequest(%s %s): %v (%s)", tt.method, tt.target, err, tt.reason)
			}
			tt.want.Body = body
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("HTTPRequest(%s %s) mismatch (-want +got), %s:\n%s", tt.method, tt.target, tt.reason, diff)
			}
			// SumHTTP fingerprints exactly this Request.
			want, err := f.Sum(got)
			if err != nil {
				t.Fatal(err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if fp, err := f.SumHTTP(r); err != nil || fp != want {
				t.Errorf("SumHTTP = %v, %v; Sum(HTTPRequest) = %v", fp, err, want)
			}
		})
	}
}

// TestHTTPRequestNilHeader checks that a declared Host reaches the
// fingerprint of a hand-built request without a header map.
func TestHTTPRequestNilHeader(t *testing.T) {
	f := compile(t, Spec{Headers: []string{"Host"}})
	r := &http.Request{Method: "POST", URL: &url.URL{Path: "/v1/payments"}, Host: "api.example.com"}
	got, err := f.HTTPRequest(r, nil)
	want := Request{Method: "POST", Path: "/v1/payments", Header: http.Header{"Host": {"api.example.com"}}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); err != nil || diff != "" {
		t.Errorf("HTTPRequest = %v; mismatch (-want +got):\n%s", err, diff)
	}
	if r.Header != nil {
		t.Errorf("HTTPRequest set r.Header to %v", r.Header)
	}
}
