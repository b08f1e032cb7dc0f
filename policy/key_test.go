package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// primaryOf returns the primary storage key of a StorageKeys result.
func primaryOf(primary, _ string, err error) (string, error) { return primary, err }

func TestKeySyntax(t *testing.T) {
	printable := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	short := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "key": {"max_length": 8}}]}`)
	uuid := mustRule(t, `{"rules": [{"route": "POST /v1/payments", "key": {"syntax": "uuid"}}]}`)
	for _, tc := range []struct {
		name   string
		rule   *policy.Rule
		values []string
		key    string // the content, when valid
		err    error
	}{
		{"Plain", printable, []string{"pay-7f3a"}, "pay-7f3a", nil},
		{"Printable", printable, []string{`a b~!"#$%&'()*+,-./:;<=>?@[\]^_{|}`}, `a b~!"#$%&'()*+,-./:;<=>?@[\]^_{|}`, nil},
		{"SFString/Plain", printable, []string{`"pay-7f3a"`}, "pay-7f3a", nil},
		{"SFString/EscapedQuote", printable, []string{`"a\"b"`}, `a"b`, nil},
		{"SFString/EscapedBackslash", printable, []string{`"a\\b"`}, `a\b`, nil},
		{"SFString/InnerSpace", printable, []string{`"a b"`}, "a b", nil},
		{"Raw/QuoteInside", printable, []string{`a"b`}, `a"b`, nil},
		{"Length/255", printable, []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255), nil},
		{"Length/255Quoted", printable, []string{`"` + strings.Repeat("k", 255) + `"`}, strings.Repeat("k", 255), nil},
		{"Length/Declared", short, []string{"12345678"}, "12345678", nil},
		{"UUID/Lower", uuid, []string{"f47ac10b-58cc-4372-a567-0e02b2c3d479"}, "f47ac10b-58cc-4372-a567-0e02b2c3d479", nil},
		{"UUID/UpperIsLower", uuid, []string{"F47AC10B-58CC-4372-A567-0E02B2C3D479"}, "f47ac10b-58cc-4372-a567-0e02b2c3d479", nil},
		{"UUID/MixedQuoted", uuid, []string{`"F47ac10b-58CC-4372-a567-0E02B2C3D479"`}, "f47ac10b-58cc-4372-a567-0e02b2c3d479", nil},
		{"UUID/SyntaxPrintableKeepsCase", printable, []string{"F47AC10B-58CC-4372-A567-0E02B2C3D479"}, "F47AC10B-58CC-4372-A567-0E02B2C3D479", nil},

		{"Missing/Nil", printable, nil, "", policy.ErrMissingKey},
		{"Missing/Empty", printable, []string{}, "", policy.ErrMissingKey},
		{"Malformed/Repeated", printable, []string{"a", "a"}, "", policy.ErrMalformedKey},
		{"Malformed/EmptyValue", printable, []string{""}, "", policy.ErrMalformedKey},
		{"Malformed/EmptySFString", printable, []string{`""`}, "", policy.ErrMalformedKey},
		{"Malformed/Length/256", printable, []string{strings.Repeat("k", 256)}, "", policy.ErrMalformedKey},
		{"Malformed/Length/Declared", short, []string{"123456789"}, "", policy.ErrMalformedKey},
		{"Malformed/Length/DeclaredQuoted", short, []string{`"123456789"`}, "", policy.ErrMalformedKey},
		{"Malformed/Tab", printable, []string{"a\tb"}, "", policy.ErrMalformedKey},
		{"Malformed/NonASCII", printable, []string{"café"}, "", policy.ErrMalformedKey},
		{"Malformed/DEL", printable, []string{"a\x7fb"}, "", policy.ErrMalformedKey},
		{"Malformed/LeadingSpace", printable, []string{" abc"}, "", policy.ErrMalformedKey},
		{"Malformed/TrailingSpaceQuoted", printable, []string{`"abc "`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/Unterminated", printable, []string{`"abc`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/Parameters", printable, []string{`"abc";v=1`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/TwoStrings", printable, []string{`"a", "b"`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/BadEscape", printable, []string{`"a\nb"`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/LoneBackslash", printable, []string{`"ab\"`}, "", policy.ErrMalformedKey},
		{"Malformed/SFString/NonASCII", printable, []string{`"café"`}, "", policy.ErrMalformedKey},
		{"Malformed/UUID/Short", uuid, []string{"f47ac10b-58cc-4372-a567-0e02b2c3d47"}, "", policy.ErrMalformedKey},
		{"Malformed/UUID/NoHyphens", uuid, []string{"f47ac10b58cc4372a5670e02b2c3d479xxxx"}, "", policy.ErrMalformedKey},
		{"Malformed/UUID/NotHex", uuid, []string{"g47ac10b-58cc-4372-a567-0e02b2c3d479"}, "", policy.ErrMalformedKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := primaryOf(tc.rule.StorageKeys(policy.Request{Tenant: "acme", Key: tc.values}))
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("StorageKey(%q) err = %v, want %v", tc.values, err, tc.err)
			}
			if want := storageKey("acme", "", tc.key); err == nil && got != want {
				t.Errorf("StorageKey(%q) = %q, want %q", tc.values, got, want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "policy: the ") {
				t.Errorf("StorageKey(%q) error %q is not prefixed once with the package", tc.values, err)
			}
			if d, _ := tc.rule.Decide(policy.Request{Tenant: "acme", Key: tc.values}, nil, nil, time.Time{}); err != nil &&
				(d.Problem == nil || d.Problem.Status != 400 || strings.Contains(d.Problem.Detail, "policy") || d.Problem.Detail[0] < 'A' || d.Problem.Detail[0] > 'Z') {
				t.Errorf("Decide(%q) = %+v, want a 400 whose detail is a sentence", tc.values, d.Problem)
			}
		})
	}
}

// TestStorageKeyFormat pins the storage key encoding: stored records are
// found by it, so it is a format like the fingerprint's.
func TestStorageKeyFormat(t *testing.T) {
	for _, tc := range []struct {
		policy, tenant, key, want string
	}{
		{`{"rules": [{"route": "POST /v1/payments"}]}`, "acme", "pay-7f3a", "idem1:4:acme:0::8:pay-7f3a"},
		{`{"rules": [{"route": "POST /v1/payments", "scope": {"route": true}}]}`, "acme", "pay-7f3a", "idem1:4:acme:17:POST /v1/payments:8:pay-7f3a"},
		{`{"rules": [{"route": "POST /v1/payments"}]}`, "a:b", "c", "idem1:3:a:b:0::1:c"},
		{`{"rules": [{"route": "POST /v1/payments"}]}`, "a", "b:c", "idem1:1:a:0::3:b:c"},
	} {
		got, err := primaryOf(mustRule(t, tc.policy).StorageKeys(policy.Request{Tenant: tc.tenant, Key: []string{tc.key}}))
		if err != nil || got != tc.want {
			t.Errorf("StorageKey(%q, %q) = %q, %v; want %q", tc.tenant, tc.key, got, err, tc.want)
		}
	}
	if _, err := primaryOf(mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`).StorageKeys(policy.Request{Key: []string{"k"}})); !errors.Is(err, policy.ErrNoTenant) {
		t.Errorf("StorageKey without a tenant: err = %v, want ErrNoTenant", err)
	}
}

// TestStorageKeyInjective checks that distinct (tenant, key) pairs never
// share a storage key, over an alphabet made of the encoding's own
// delimiters and digits.
func TestStorageKeyInjective(t *testing.T) {
	rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`)
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 2000
	props := gopter.NewProperties(params)
	part := gen.SliceOfN(6, gen.OneConstOf('a', ':', '1', '0', 'i')).Map(func(rs []rune) string {
		return strings.Trim(string(rs), " ")
	})
	key := func(tenant, k string) (string, bool) {
		sk, err := primaryOf(rule.StorageKeys(policy.Request{Tenant: tenant, Key: []string{k}}))
		return sk, err == nil
	}
	props.Property("distinct pairs, distinct keys", prop.ForAll(
		func(t1, k1, t2, k2 string) bool {
			s1, ok1 := key(t1, k1)
			s2, ok2 := key(t2, k2)
			if !ok1 || !ok2 {
				return true // empty tenant or key: no storage key at all
			}
			return (s1 == s2) == (t1 == t2 && k1 == k2)
		},
		part, part, part, part,
	))
	props.Property("a split moved across components", prop.ForAll(
		func(a, b, c string) bool {
			s1, ok1 := key(a+b, c)
			s2, ok2 := key(a, b+c)
			return !ok1 || !ok2 || b == "" || s1 != s2
		},
		part, part, part,
	))
	props.TestingRun(t)
}

// TestPrimaryKey checks that PrimaryKey maps both storage keys of a
// request, under rules scoped and not, resolving with "new" or not, to its
// primary key, and refuses what is not a storage key.
func TestPrimaryKey(t *testing.T) {
	for _, settings := range []string{
		`"on_mismatch": "new"`,
		`"on_mismatch": "new", "scope": {"route": true}`,
		`"on_spec_change": "new", "key": {"syntax": "uuid"}`,
		`"scope": {"route": true}`,
	} {
		rule := mustRule(t, `{"rules": [{"route": "POST /v1/payments", `+settings+`}]}`)
		for _, tenant := range []string{"acme", "a:1:b", ":"} {
			req := policy.Request{Tenant: tenant, Key: []string{"0F000000-0000-4000-8000-000000000000"}, Fingerprint: sum(t, rule, `{"a":1}`)}
			pk, nk, err := rule.StorageKeys(req)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := policy.PrimaryKey(pk); !ok || got != pk {
				t.Errorf("%s: PrimaryKey(%q) = %q, %v; want the key itself", settings, pk, got, ok)
			}
			if nk == "" {
				continue
			}
			if got, ok := policy.PrimaryKey(nk); !ok || got != pk {
				t.Errorf("%s: PrimaryKey(%q) = %q, %v; want %q", settings, nk, got, ok, pk)
			}
		}
	}
	fp := sum(t, mustRule(t, `{"rules": [{"route": "POST /v1/payments"}]}`), `{}`).String()
	for _, tc := range []struct{ key, reason string }{
		{"", "empty"},
		{"idem1", "no component"},
		{"idem1:4:acme:0:", "two components"},
		{"idem1:4:acme:0::1:k:0:", "four components"},
		{storageKey("acme", "", "k", fp, "sha256:x", "more"), "six components"},
		{"idem2:4:acme:0::1:k", "another version"},
		{"idem1:04:acme:0::1:k", "a leading zero"},
		{"idem1:+4:acme:0::1:k", "a sign"},
		{"idem1:4:acme:0::2:k", "a length past the end"},
		{"idem1:4:acme:0::99999999999999999999:k", "a length that overflows"},
		{"idem1:4:acme:0::100000000000000000:k", "a length of 18 digits past the end"},
		{"idem1::acme:0::1:k", "an empty length"},
		{"idem1:4:acme:0::1", "a length without its colon"},
		{"idem1:4:acme:0:1:k", "a length without its colon, mid-key"},
		{"idem1:4:acme:0::1:kx", "bytes after the last component"},
		{"idem1:0::0::1:k", "an empty tenant"},
		{"idem1:4:acme:0::0:", "an empty key"},
		{storageKey("acme", "", "k", "v1:sha256:nope", "sha256:x"), "a fingerprint that does not parse"},
		{storageKey("acme", "", "k", fp, ""), "an empty spec digest"},
	} {
		if got, ok := policy.PrimaryKey(tc.key); ok {
			t.Errorf("PrimaryKey(%q) = %q, true; want false (%s)", tc.key, got, tc.reason)
		}
	}
}
