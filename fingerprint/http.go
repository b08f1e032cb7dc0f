package fingerprint

import (
	"net/http"
	"net/url"
)

// HTTPRequest returns the Request that a server fingerprints for r with body
// as its body: r.Method; the escaped path, URL.EscapedPath(), in which
// /a%2Fb and /a/b differ; the query parsed from URL.RawQuery; and r.Header,
// with r.Host added as the Host header when the Spec declares Host, since
// net/http moves Host out of the header map. A server matches its policy
// rule on the decoded path (URL.Path) and fingerprints this Request; a tool
// that builds an *http.Request for the same request line and headers and
// calls HTTPRequest computes the same fingerprint.
//
// A query that does not parse is a [*RequestError] for the query when the
// Spec declares query parameters, because url.URL.Query would silently drop
// the part it cannot parse; when the Spec declares none, the query does not
// count and is not checked.
//
// The Request shares body and r.Header (a copy when Host is added); r is not
// modified. r.URL must not be nil, as it never is for a request a server
// receives or [http.NewRequest] builds.
func (f *Fingerprinter) HTTPRequest(r *http.Request, body []byte) (Request, error) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil && len(f.query) > 0 {
		return Request{}, &RequestError{Part: "query", Err: &detail{ErrInvalidRequest, err.Error()}}
	}
	hdr := r.Header
	if f.host && r.Host != "" && len(hdr.Values("Host")) == 0 {
		hdr = hdr.Clone()
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Set("Host", r.Host)
	}
	return Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: query, Header: hdr, Body: body}, nil
}
