package policy

import (
	"github.com/idemprint/idemprint/fingerprint"
)

// Request describes an incoming request to [Rule.Decide]. Build one with
// [Rule.NewRequest] or by hand. The zero value has no tenant and is
// rejected with ErrNoTenant.
type Request struct {
	// Tenant is the caller on whose behalf the request runs (an account, an
	// API key's owner); keys of two tenants never meet. It must not be
	// empty: a single-tenant service passes a fixed name, so that sharing
	// one key space is a decision and not an accident.
	Tenant string
	// Key holds the values of the rule's key header, whatever the case of
	// its name: nil when absent. [Rule.NewRequest] collects the values of
	// every spelling, so that two spellings are a repeated header.
	Key []string
	// Path is the request's path as it is fingerprinted: the escaped form
	// (URL.EscapedPath) that [fingerprint.Fingerprinter.HTTPRequest] gives
	// and [Rule.NewRequest] copies, in which /a%2Fb and /a/b differ. A
	// defaults' rule, which matches any path, needs it: each path is an
	// endpoint of its own, and a key used on one is never taken for an
	// operation of another. A rule with a route ignores it.
	Path string
	// Fingerprint is the request's fingerprint under the rule's spec. It
	// must be set when Key is.
	Fingerprint fingerprint.Fingerprint
	// Intent is the request's intent projection. It is kept in the reserved
	// record only when the rule stores intent, and compared with the stored
	// one to list the fields a key-reuse rejection differs at.
	Intent []byte
}

// target is where a request's records are: its key's content, its
// endpoint, and its two storage keys (newIdentity "" for a rule that
// resolves nothing with "new").
type target struct {
	key, route, primary, newIdentity string
}

// targetOf returns the target of req, whose key's content is key.
func (r *Rule) targetOf(req *Request, key string) (target, error) {
	route, err := r.routeOf(req)
	if err != nil {
		return target{}, err
	}
	t := target{key: key, route: route, primary: r.primaryKey(req.Tenant, route, key)}
	if r.resolvesNew() {
		if req.Fingerprint.IsZero() {
			return target{}, errNoFingerprint
		}
		t.newIdentity = r.newKey(req.Tenant, route, key, req.Fingerprint)
	}
	return t, nil
}

// NewRequest computes the Request for fr under r: the key header's values
// (its name compared case-insensitively, as the fingerprint compares header
// names), the path, and, when there is a key, the fingerprint and (when the
// rule stores intent) the intent projection. Without a key nothing is
// fingerprinted, so a pass-through request may have any body. The error is
// the fingerprint package's: a *canonical.Error for a body that is not
// strict JSON, a *fingerprint.RequestError for a missing required value;
// answer it with a 400.
//
// Build fr from an *http.Request with [fingerprint.Fingerprinter.HTTPRequest]
// of r.Fingerprinter(): net/http moves the Host header out of
// Request.Header into Request.Host, and that builder puts it back when the
// rule's fingerprint declares it ("headers": ["Host"]), so that requests
// to two hosts differ. A caller that builds fr by hand sets fr.Header's
// Host itself. When the rule's fingerprint declares Host and fr.Header has
// none, NewRequest fails (a *fingerprint.RequestError wrapping
// fingerprint.ErrMissingRequired; a client must send the host, RFC 9110
// §7.2) rather than fingerprint the request without it.
func (r *Rule) NewRequest(tenant string, fr fingerprint.Request) (Request, error) {
	req := Request{Tenant: tenant, Key: headerValues(fr.Header, r.keyHeader), Path: fr.Path}
	if len(req.Key) == 0 {
		req.Key = nil
		return req, nil
	}
	if r.fpHost && len(headerValues(fr.Header, "Host")) == 0 {
		return Request{}, &fingerprint.RequestError{Part: "header", Name: "host", Err: errorf(fingerprint.ErrMissingRequired,
			"required value missing: the rule's fingerprint declares Host, which net/http keeps in Request.Host; build the request with Fingerprinter.HTTPRequest")}
	}
	var err error
	if r.storeIntent {
		req.Fingerprint, req.Intent, err = r.fp.SumIntent(nil, fr)
	} else {
		req.Fingerprint, err = r.fp.Sum(fr)
	}
	if err != nil {
		return Request{}, err
	}
	return req, nil
}

// StorageKeys returns where the records of req are stored under r: primary,
// the storage key of the tenant and the key (and, when the rule's scope
// includes the route, the endpoint), and newIdentity, the storage key of
// the new identity that on_mismatch or on_spec_change "new" gives the
// request: its key together with its fingerprint and spec digest.
// newIdentity is "" for a rule that resolves nothing with "new"; then pass
// a nil record for it. See the package documentation for the encoding.
//
// Read the records under both keys and pass them to [Rule.Decide]. The
// error wraps ErrNoTenant, ErrNoPath, ErrNoFingerprint (a rule with a new
// identity needs the fingerprint, which [Rule.NewRequest] computes),
// ErrMissingKey or ErrMalformedKey; with the latter two, call Decide with
// nil records to learn the answer.
func (r *Rule) StorageKeys(req Request) (primary, newIdentity string, err error) {
	if req.Tenant == "" {
		return "", "", errNoTenant
	}
	key, err := r.parseKey(req.Key)
	if err != nil {
		return "", "", err
	}
	t, err := r.targetOf(&req, key)
	if err != nil {
		return "", "", err
	}
	return t.primary, t.newIdentity, nil
}

// resolvesNew reports whether some resolution of r is "new", so that its
// requests have a new identity.
func (r *Rule) resolvesNew() bool {
	return r.onMismatch == ResolveNew || r.onSpecChange == ResolveNew
}

// routeOf returns the endpoint of req under r: the rule's, or for a
// defaults' rule the method and the request's path.
func (r *Rule) routeOf(req *Request) (string, error) {
	if r.endpoint != "" {
		return r.endpoint, nil
	}
	if req.Path == "" {
		return "", errNoPath
	}
	return r.method + " " + req.Path, nil
}

func (r *Rule) primaryKey(tenant, route, key string) string {
	if !r.scopeRoute {
		route = ""
	}
	return storageKey(tenant, route, key)
}

// newKey returns the storage key of the new identity that on_mismatch and
// on_spec_change "new" give a request: its key together with its
// fingerprint and spec digest, so that a record found there is, by
// construction, of an equal request.
func (r *Rule) newKey(tenant, route, key string, fp fingerprint.Fingerprint) string {
	if !r.scopeRoute {
		route = ""
	}
	return storageKey(tenant, route, key, fp.String(), r.fp.SpecDigest())
}

var (
	errNoTenant      = errorf(ErrNoTenant, "policy: empty tenant: pass a fixed name when there is one tenant")
	errNoPath        = errorf(ErrNoPath, "policy: empty path: a defaults' rule keeps the records of each path apart")
	errNoFingerprint = errorf(ErrNoFingerprint, "policy: the request has a key but a zero fingerprint")
)
