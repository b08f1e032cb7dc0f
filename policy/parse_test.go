package policy_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// want is one expected problem: where and which sentinel.
type want struct {
	Pointer string
	Err     error
}

// problemsOf reduces a Parse error to its pointers and the sentinels among
// candidates that each problem wraps.
func problemsOf(t *testing.T, err error, candidates []error) []want {
	t.Helper()
	var pe *policy.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse error %v (%T) is not a *policy.ParseError", err, err)
	}
	var got []want
	for _, p := range pe.Findings {
		w := want{Pointer: p.Pointer}
		for _, c := range candidates {
			if errors.Is(p.Err, c) {
				w.Err = c
				break
			}
		}
		if w.Err == nil {
			t.Errorf("problem %v wraps no known sentinel", p)
		}
		got = append(got, w)
	}
	return got
}

var sentinels = []error{
	policy.ErrUnknownField, policy.ErrType, policy.ErrMissing, policy.ErrInvalid, policy.ErrDuration,
	policy.ErrRoute, policy.ErrOverlap, policy.ErrUnreachable, policy.ErrCache, policy.ErrIneffective,
	canonical.ErrSyntax, canonical.ErrDuplicateName, canonical.ErrInvalidUTF8, canonical.ErrTooDeep,
	fingerprint.ErrInvalidPath, fingerprint.ErrInvalidSpec,
}

// parseInvalidTests are invalid policies with their problems, in document
// order. FuzzParse is seeded from them.
var parseInvalidTests = []struct {
	name   string
	policy string
	want   []want
	reason string
}{
	// Not strict JSON: one problem, the canonical error's.
	{"JSON/Syntax", `{"rules": [}`, []want{{"/rules/0", canonical.ErrSyntax}}, "a syntax error stops the walk"},
	{"JSON/DuplicateName", `{"rules": [], "rules": []}`, []want{{"/rules", canonical.ErrDuplicateName}},
		"encoding/json would keep the last, gjson the first: neither is chosen"},
	{"JSON/DuplicateNameInRule", `{"rules": [{"route": "POST /a", "ttl": "1h", "ttl": "2h"}]}`,
		[]want{{"/rules/0/ttl", canonical.ErrDuplicateName}}, ""},
	{"JSON/InvalidUTF8", "{\"rules\": [], \"defaults\": {\"replay_header\": \"X: \xff\"}}",
		[]want{{"/defaults/replay_header", canonical.ErrInvalidUTF8}}, ""},
	{"JSON/TooDeep", `{"rules": [` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `]}`,
		[]want{{"/rules/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", canonical.ErrTooDeep}}, "a policy is shallow"},

	// Shape.
	{"Root/NotObject", `[]`, []want{{"", policy.ErrType}}, ""},
	{"Root/MissingRules", `{}`, []want{{"/rules", policy.ErrMissing}}, "an empty list is fine, a forgotten one is not"},
	{"Root/RulesNotArray", `{"rules": {}}`, []want{{"/rules", policy.ErrType}}, ""},
	{"Root/UnknownField", `{"rules": [], "version": 1}`, []want{{"/version", policy.ErrUnknownField}}, ""},
	{"Rule/NotObject", `{"rules": ["POST /a"]}`, []want{{"/rules/0", policy.ErrType}}, ""},
	{"Rule/MissingRoute", `{"rules": [{"ttl": "1h"}]}`, []want{{"/rules/0", policy.ErrMissing}}, ""},
	{"Rule/UnknownField", `{"rules": [{"route": "POST /a", "onMismatch": "new"}]}`, []want{{"/rules/0/onMismatch", policy.ErrUnknownField}}, ""},
	{"Rule/MethodsOnlyInDefaults", `{"rules": [{"route": "POST /a", "methods": ["POST"]}]}`, []want{{"/rules/0/methods", policy.ErrUnknownField}}, ""},
	{"Key/UnknownField", `{"rules": [{"route": "POST /a", "key": {"name": "X"}}]}`, []want{{"/rules/0/key/name", policy.ErrUnknownField}}, ""},
	{"Scope/UnknownField", `{"rules": [{"route": "POST /a", "scope": {"tenant": false}}]}`, []want{{"/rules/0/scope/tenant", policy.ErrUnknownField}},
		"the tenant is always in the key; it cannot be scoped out"},
	{"Fingerprint/UnknownField", `{"rules": [{"route": "POST /a", "fingerprint": {"intents": ["a"]}}]}`, []want{{"/rules/0/fingerprint/intents", policy.ErrUnknownField}}, ""},
	{"EscapedPointer", `{"rules": [{"route": "POST /a", "a/b~c": 1}]}`, []want{{"/rules/0/a~1b~0c", policy.ErrUnknownField}}, "RFC 6901 escapes"},

	// Types.
	{"Type/TTLNumber", `{"rules": [{"route": "POST /a", "ttl": 86400}]}`, []want{{"/rules/0/ttl", policy.ErrType}}, "durations are strings with units"},
	{"Type/RequiredString", `{"rules": [{"route": "POST /a", "key": {"required": "yes"}}]}`, []want{{"/rules/0/key/required", policy.ErrType}}, ""},
	{"Type/StatusFraction", `{"rules": [{"route": "POST /a", "mismatch_status": 409.0}]}`, []want{{"/rules/0/mismatch_status", policy.ErrType}}, "no coercion"},
	{"Type/IntentNotList", `{"rules": [{"route": "POST /a", "fingerprint": {"intent": "amount"}}]}`, []want{{"/rules/0/fingerprint/intent", policy.ErrType}}, ""},
	{"Type/IntentElement", `{"rules": [{"route": "POST /a", "fingerprint": {"intent": ["a", 1]}}]}`, []want{{"/rules/0/fingerprint/intent/1", policy.ErrType}}, ""},
	{"Type/Route", `{"rules": [{"route": ["POST", "/a"]}]}`, []want{{"/rules/0/route", policy.ErrType}}, ""},

	// Routes.
	{"Route/NoSpace", `{"rules": [{"route": "POST"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/LowerMethod", `{"rules": [{"route": "post /a"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/TwoSpaces", `{"rules": [{"route": "POST  /a"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/RelativePath", `{"rules": [{"route": "POST a/b"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/TrailingSlash", `{"rules": [{"route": "POST /a/"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/EmptySegment", `{"rules": [{"route": "POST /a//b"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/PartialParam", `{"rules": [{"route": "POST /v{n}/a"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, "parameters are whole segments"},
	{"Route/EmptyParam", `{"rules": [{"route": "POST /a/{}"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/RepeatedParam", `{"rules": [{"route": "POST /a/{id}/b/{id}"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/Query", `{"rules": [{"route": "POST /a?b=1"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/PercentEscape", `{"rules": [{"route": "POST /a%2Fb"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, "patterns match decoded paths"},
	{"Route/DotDotSegment", `{"rules": [{"route": "POST /v1/../admin"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, "a router cleans it away: the rule would never match"},
	{"Route/DotSegment", `{"rules": [{"route": "POST /v1/./x"}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},
	{"Route/TrailingDotDot", `{"rules": [{"route": "POST /v1/.."}]}`, []want{{"/rules/0/route", policy.ErrRoute}}, ""},

	// Overlap and reachability under first-match order.
	{"Overlap/SameRoute", `{"rules": [{"route": "POST /a"}, {"route": "POST /a"}]}`, []want{{"/rules/1/route", policy.ErrUnreachable}}, ""},
	{"Overlap/RenamedParam", `{"rules": [{"route": "POST /v1/{a}/x"}, {"route": "POST /v1/{b}/x"}]}`, []want{{"/rules/1/route", policy.ErrUnreachable}}, "parameter names do not matter"},
	{"Overlap/GeneralFirst", `{"rules": [{"route": "POST /v1/{id}"}, {"route": "POST /v1/batch"}]}`, []want{{"/rules/1/route", policy.ErrUnreachable}}, ""},
	{"Overlap/Crossing", `{"rules": [{"route": "POST /v1/{a}/x"}, {"route": "POST /v1/y/{b}"}]}`, []want{{"/rules/1/route", policy.ErrOverlap}}, "/v1/y/x matches both"},
	{"Overlap/ReportedOncePerRule", `{"rules": [{"route": "POST /v1/{a}/x"}, {"route": "POST /v1/y/{b}"}, {"route": "POST /v1/{c}/{d}"}]}`,
		[]want{{"/rules/1/route", policy.ErrOverlap}}, "the third is the general case of both"},
	{"Overlap/UnreachableHidesOverlaps", `{"rules": [{"route": "POST /v1/{a}/x"}, {"route": "POST /v1/y/{b}"}, {"route": "POST /v1/y/x"}]}`,
		[]want{{"/rules/1/route", policy.ErrOverlap}, {"/rules/2/route", policy.ErrUnreachable}}, ""},
	{"Overlap/SharedPathNotTaken", `{"rules": [{"route": "POST /a/c"}, {"route": "POST /{x}/b"}, {"route": "POST /a/{y}"}]}`,
		[]want{{"/rules/2/route", policy.ErrOverlap}}, "/a/b matches the last two and goes to /{x}/b, which is not more specific than /a/{y}"},
	{"Overlap/TakerAfterIsNoExcuse", `{"rules": [{"route": "POST /{x}/b"}, {"route": "POST /a/b"}, {"route": "POST /a/{y}"}]}`,
		[]want{{"/rules/1/route", policy.ErrUnreachable}, {"/rules/2/route", policy.ErrOverlap}}, "/a/b goes to /rules/0, not to the unreachable /rules/1"},
	{"Overlap/OtherTakerNotMoreSpecific", `{"rules": [{"route": "POST /{x}/b/c"}, {"route": "POST /{x}/{y}/c"}, {"route": "POST /a/{y}/{z}"}]}`,
		[]want{{"/rules/2/route", policy.ErrOverlap}}, "/a/b/c goes to /rules/0 and /a/d/c to /rules/1, neither more specific than /rules/2: one problem, naming the first"},

	// Values.
	{"Duration/Negative", `{"rules": [{"route": "POST /a", "ttl": "-5s"}]}`, []want{{"/rules/0/ttl", policy.ErrDuration}}, ""},
	{"Duration/Zero", `{"rules": [{"route": "POST /a", "lease": "0s"}]}`, []want{{"/rules/0/lease", policy.ErrDuration}}, ""},
	{"Duration/NoUnit", `{"rules": [{"route": "POST /a", "ttl": "86400"}]}`, []want{{"/rules/0/ttl", policy.ErrDuration}}, ""},
	{"Duration/Days", `{"rules": [{"route": "POST /a", "ttl": "1d"}]}`, []want{{"/rules/0/ttl", policy.ErrDuration}}, "Go durations have no days"},
	{"Duration/RetryAfterFraction", `{"rules": [{"route": "POST /a", "retry_after": "1500ms"}]}`, []want{{"/rules/0/retry_after", policy.ErrDuration}}, "never rounded"},
	{"Duration/PlusSign", `{"rules": [{"route": "POST /a", "ttl": "+1h"}]}`, []want{{"/rules/0/ttl", policy.ErrDuration}}, "time.ParseDuration accepts a sign; a policy does not"},
	{"Duration/PlusSignLease", `{"defaults": {"lease": "+10s"}, "rules": []}`, []want{{"/defaults/lease", policy.ErrDuration}}, ""},
	{"Duration/WaitNegative", `{"rules": [{"route": "POST /a", "wait": "-1s"}]}`, []want{{"/rules/0/wait", policy.ErrDuration}}, ""},
	{"Duration/WaitPlusSign", `{"rules": [{"route": "POST /a", "wait": "+1s"}]}`, []want{{"/rules/0/wait", policy.ErrDuration}}, ""},
	{"Duration/WaitNumber", `{"rules": [{"route": "POST /a", "wait": 5}]}`, []want{{"/rules/0/wait", policy.ErrType}}, ""},
	{"Resolution/Unknown", `{"rules": [{"route": "POST /a", "on_mismatch": "ignore"}]}`, []want{{"/rules/0/on_mismatch", policy.ErrInvalid}}, ""},
	{"Resolution/Case", `{"rules": [{"route": "POST /a", "on_spec_change": "Reject"}]}`, []want{{"/rules/0/on_spec_change", policy.ErrInvalid}}, ""},
	{"MismatchStatus/500", `{"rules": [{"route": "POST /a", "mismatch_status": 500}]}`, []want{{"/rules/0/mismatch_status", policy.ErrInvalid}}, ""},
	{"MismatchStatus/200", `{"rules": [{"route": "POST /a", "mismatch_status": 200}]}`, []want{{"/rules/0/mismatch_status", policy.ErrInvalid}}, ""},
	{"Key/HeaderName", `{"rules": [{"route": "POST /a", "key": {"header": "Idempotency Key"}}]}`, []want{{"/rules/0/key/header", policy.ErrInvalid}}, ""},
	{"Key/Syntax", `{"rules": [{"route": "POST /a", "key": {"syntax": "ulid"}}]}`, []want{{"/rules/0/key/syntax", policy.ErrInvalid}}, ""},
	{"Key/HeaderHost", `{"rules": [{"route": "POST /a", "key": {"header": "Host"}}]}`, []want{{"/rules/0/key/header", policy.ErrInvalid}},
		"net/http moves Host out of the header map: every request would miss its key"},
	{"Key/HeaderTransferEncoding", `{"rules": [{"route": "POST /a", "key": {"header": "transfer-encoding"}}]}`, []want{{"/rules/0/key/header", policy.ErrInvalid}}, ""},
	{"Key/HeaderContentLength", `{"rules": [{"route": "POST /a", "key": {"header": "Content-Length"}}]}`, []want{{"/rules/0/key/header", policy.ErrInvalid}}, ""},
	{"Key/HeaderHopByHop", `{"defaults": {"key": {"header": "Connection"}}, "rules": [{"route": "POST /a", "key": {"header": "TE"}}]}`,
		[]want{{"/defaults/key/header", policy.ErrInvalid}, {"/rules/0/key/header", policy.ErrInvalid}}, "a proxy removes it"},
	{"Fingerprint/HeaderTransferEncoding", `{"rules": [{"route": "POST /a", "fingerprint": {"headers": ["X-Account", "Transfer-Encoding"]}}]}`,
		[]want{{"/rules/0/fingerprint/headers/1", policy.ErrInvalid}}, "it never reaches the fingerprint: every request would look alike"},
	{"Fingerprint/HeaderUpgrade", `{"defaults": {"fingerprint": {"headers": ["upgrade"]}}, "rules": []}`,
		[]want{{"/defaults/fingerprint/headers/0", policy.ErrInvalid}}, ""},
	{"Key/MaxLengthZero", `{"rules": [{"route": "POST /a", "key": {"max_length": 0}}]}`, []want{{"/rules/0/key/max_length", policy.ErrInvalid}}, ""},
	{"Key/MaxLengthHuge", `{"rules": [{"route": "POST /a", "key": {"max_length": 100000}}]}`, []want{{"/rules/0/key/max_length", policy.ErrInvalid}}, ""},
	{"ReplayHeader/NoColon", `{"rules": [{"route": "POST /a", "replay_header": "Idempotent-Replayed"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/NoValue", `{"rules": [{"route": "POST /a", "replay_header": "X-Replayed:  "}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/ContentType", `{"rules": [{"route": "POST /a", "replay_header": "Content-Type: text/plain"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}},
		"it would replace the stored response's type"},
	{"ReplayHeader/ContentLengthLowerCase", `{"rules": [{"route": "POST /a", "replay_header": "content-length: 0"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/ContentEncoding", `{"rules": [{"route": "POST /a", "replay_header": "Content-Encoding: gzip"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/TransferEncoding", `{"rules": [{"route": "POST /a", "replay_header": "Transfer-Encoding: chunked"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, "hop-by-hop"},
	{"ReplayHeader/Connection", `{"defaults": {"replay_header": "CONNECTION: close"}, "rules": []}`, []want{{"/defaults/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/TE", `{"rules": [{"route": "POST /a", "replay_header": "te: trailers"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, ""},
	{"ReplayHeader/ETag", `{"rules": [{"route": "POST /a", "replay_header": "ETag: x"}]}`, []want{{"/rules/0/replay_header", policy.ErrInvalid}}, "a validator of the stored representation"},
	{"Methods/Lower", `{"defaults": {"methods": ["post"]}, "rules": []}`, []want{{"/defaults/methods/0", policy.ErrInvalid}}, ""},
	{"Methods/Twice", `{"defaults": {"methods": ["POST", "PUT", "POST"]}, "rules": []}`, []want{{"/defaults/methods/2", policy.ErrInvalid}}, ""},

	// Cache lists.
	{"Cache/Empty", `{"rules": [{"route": "POST /a", "cache": []}]}`, []want{{"/rules/0/cache", policy.ErrCache}}, ""},
	{"Cache/Informational", `{"rules": [{"route": "POST /a", "cache": ["1xx"]}]}`, []want{{"/rules/0/cache/0", policy.ErrCache}}, "not a final response"},
	{"Cache/BadEntry", `{"rules": [{"route": "POST /a", "cache": ["2XX", "20x", "!", "6xx", "700"]}]}`,
		[]want{{"/rules/0/cache/0", policy.ErrCache}, {"/rules/0/cache/1", policy.ErrCache}, {"/rules/0/cache/2", policy.ErrCache}, {"/rules/0/cache/3", policy.ErrCache}, {"/rules/0/cache/4", policy.ErrCache}}, ""},
	{"Cache/Repeated", `{"rules": [{"route": "POST /a", "cache": ["2xx", "2xx"]}]}`, []want{{"/rules/0/cache/1", policy.ErrCache}}, ""},
	{"Cache/RedundantCode", `{"rules": [{"route": "POST /a", "cache": ["201", "2xx"]}]}`, []want{{"/rules/0/cache/0", policy.ErrCache}}, ""},
	{"Cache/RedundantNegation", `{"rules": [{"route": "POST /a", "cache": ["2xx", "4xx", "!4xx", "!429"]}]}`,
		[]want{{"/rules/0/cache/1", policy.ErrCache}, {"/rules/0/cache/3", policy.ErrCache}}, "4xx is wholly excluded; !429 is inside !4xx"},
	{"Cache/NegationWithoutEffect", `{"rules": [{"route": "POST /a", "cache": ["2xx", "!500"]}]}`, []want{{"/rules/0/cache/1", policy.ErrCache}}, ""},
	{"Cache/CodeExcluded", `{"rules": [{"route": "POST /a", "cache": ["2xx", "404", "!4xx"]}]}`, []want{{"/rules/0/cache/1", policy.ErrCache}}, ""},

	// Settings without effect.
	{"Ineffective/MismatchStatusWithReplay", `{"rules": [{"route": "POST /a", "on_mismatch": "replay", "mismatch_status": 409}]}`,
		[]want{{"/rules/0/mismatch_status", policy.ErrIneffective}}, ""},
	{"Ineffective/MismatchStatusUnderReplayDefault", `{"defaults": {"on_mismatch": "new"}, "rules": [{"route": "POST /a", "mismatch_status": 409}]}`,
		[]want{{"/rules/0/mismatch_status", policy.ErrIneffective}}, ""},
	{"Ineffective/MaxLengthWithUUID", `{"rules": [{"route": "POST /a", "key": {"syntax": "uuid", "max_length": 36}}]}`,
		[]want{{"/rules/0/key/max_length", policy.ErrIneffective}}, ""},
	{"Ineffective/LeaseAsLongAsTTL", `{"rules": [{"route": "POST /a", "ttl": "30s"}]}`, []want{{"/rules/0/ttl", policy.ErrIneffective}}, "the default lease is 30s"},
	{"Ineffective/LeaseLongerThanTTL", `{"defaults": {"ttl": "1h"}, "rules": [{"route": "POST /a", "lease": "2h"}]}`, []want{{"/rules/0/lease", policy.ErrIneffective}}, ""},
	{"Ineffective/InDefaults", `{"defaults": {"lease": "48h"}, "rules": []}`, []want{{"/defaults/lease", policy.ErrIneffective}}, ""},
	{"Ineffective/RetryAfterBeyondLease", `{"rules": [{"route": "POST /a", "retry_after": "60s"}]}`, []want{{"/rules/0/retry_after", policy.ErrIneffective}}, ""},
	{"Ineffective/RetryAfterInheritedBeyondLease", `{"defaults": {"retry_after": "20s"}, "rules": [{"route": "POST /a", "lease": "10s"}]}`,
		[]want{{"/rules/0/lease", policy.ErrIneffective}}, "reported at the setting the rule makes"},
	{"Ineffective/RetryAfterBeyondInheritedLease", `{"defaults": {"lease": "10s"}, "rules": [{"route": "POST /a", "retry_after": "20s"}]}`,
		[]want{{"/rules/0/retry_after", policy.ErrIneffective}}, ""},
	{"Ineffective/WaitBeyondLease", `{"rules": [{"route": "POST /a", "wait": "31s"}]}`, []want{{"/rules/0/wait", policy.ErrIneffective}},
		"past the lease the reservation is stale and the request takes it over: it would wait for nothing"},
	{"Ineffective/WaitInheritedBeyondLease", `{"defaults": {"wait": "20s"}, "rules": [{"route": "POST /a", "lease": "10s"}]}`,
		[]want{{"/rules/0/lease", policy.ErrIneffective}}, "reported at the setting the rule makes"},
	{"Ineffective/WaitInDefaults", `{"defaults": {"wait": "1m"}, "rules": []}`, []want{{"/defaults/wait", policy.ErrIneffective}}, ""},
	{"Ineffective/StoreIntentWithReplay", `{"rules": [{"route": "POST /a", "on_mismatch": "replay", "store_intent": true}]}`,
		[]want{{"/rules/0/store_intent", policy.ErrIneffective}}, "only a key-reuse rejection lists differing fields"},
	{"Ineffective/StoreIntentUnderNewDefault", `{"defaults": {"on_mismatch": "new"}, "rules": [{"route": "POST /a", "store_intent": true}]}`,
		[]want{{"/rules/0/store_intent", policy.ErrIneffective}}, ""},
	{"Ineffective/StoreIntentInDefaults", `{"defaults": {"on_mismatch": "replay", "store_intent": true}, "rules": []}`,
		[]want{{"/defaults/store_intent", policy.ErrIneffective}}, ""},

	// Response headers never stored.
	{"ExcludeHeaders/NotList", `{"rules": [{"route": "POST /a", "exclude_headers": "X-Request-Id"}]}`, []want{{"/rules/0/exclude_headers", policy.ErrType}}, ""},
	{"ExcludeHeaders/NotToken", `{"rules": [{"route": "POST /a", "exclude_headers": ["X-Request-Id", "X Request"]}]}`, []want{{"/rules/0/exclude_headers/1", policy.ErrInvalid}}, ""},
	{"ExcludeHeaders/Twice", `{"rules": [{"route": "POST /a", "exclude_headers": ["X-Request-Id", "x-request-id"]}]}`, []want{{"/rules/0/exclude_headers/1", policy.ErrInvalid}},
		"names are case-insensitive"},
	{"ExcludeHeaders/NeverStored", `{"defaults": {"exclude_headers": ["Set-Cookie", "content-length", "X-A"]}, "rules": []}`,
		[]want{{"/defaults/exclude_headers/0", policy.ErrIneffective}, {"/defaults/exclude_headers/1", policy.ErrIneffective}}, "never stored anyway"},

	// Fingerprint specs: the fingerprint package's problems, under the rule's pointer.
	{"Spec/InvalidPath", `{"rules": [{"route": "POST /a", "fingerprint": {"intent": ["amount", "items.#(qty>1)"]}}]}`,
		[]want{{"/rules/0/fingerprint/intent/1", fingerprint.ErrInvalidPath}}, ""},
	{"Spec/Numbers", `{"rules": [{"route": "POST /a", "fingerprint": {"numbers": "float"}}]}`,
		[]want{{"/rules/0/fingerprint/numbers", fingerprint.ErrInvalidSpec}}, ""},
	{"Spec/InDefaults", `{"defaults": {"fingerprint": {"ignore": ["a|b"]}}, "rules": []}`,
		[]want{{"/defaults/fingerprint/ignore/0", fingerprint.ErrInvalidPath}}, "reported once, at the defaults"},

	// Every problem, in document order.
	{"Many", `{
  "defaults": {"ttl": "forever", "colour": "blue"},
  "rules": [
    {"route": "POST /v1/payments", "on_mismatch": "maybe", "cache": ["2xx", "2xx"]},
    {"route": "POST /v1/payments", "fingerprint": {"intent": ["@reverse"]}},
    {"route": "PATCH /v1/{x}", "store_intent": 1}
  ]
}`, []want{
		{"/defaults/ttl", policy.ErrDuration},
		{"/defaults/colour", policy.ErrUnknownField},
		{"/rules/0/on_mismatch", policy.ErrInvalid},
		{"/rules/0/cache/1", policy.ErrCache},
		{"/rules/1/route", policy.ErrUnreachable},
		{"/rules/1/fingerprint/intent/0", fingerprint.ErrInvalidPath},
		{"/rules/2/store_intent", policy.ErrType},
	}, "lint prints them all"},
}

func TestParseInvalid(t *testing.T) {
	sentinel := cmp.Comparer(func(a, b error) bool { return a == b })
	for _, tc := range parseInvalidTests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := policy.Parse([]byte(tc.policy))
			if err == nil {
				t.Fatalf("Parse(%s) = %+v, want an error (%s)", tc.policy, p, tc.reason)
			}
			if p != nil {
				t.Errorf("Parse returned a policy with its error")
			}
			if diff := cmp.Diff(tc.want, problemsOf(t, err, sentinels), sentinel); diff != "" {
				t.Errorf("Parse(%s) problems mismatch (-want +got):\n%s%s", tc.policy, diff, tc.reason)
			}
		})
	}
}

// parseValidTests are policies that must parse: the edges of the checks.
var parseValidTests = []struct {
	name, policy, reason string
}{
	{"Overlap/SharedPathTakenByException", `{"rules": [{"route": "POST /a/b"}, {"route": "POST /{x}/b"}, {"route": "POST /a/{y}"}]}`,
		"the only path the last two share, /a/b, goes to /rules/0, more specific than both"},
	{"Overlap/GeneralCaseLast", `{"rules": [{"route": "POST /a/b"}, {"route": "POST /{x}/b"}, {"route": "POST /a/{y}"}, {"route": "POST /{x}/{y}"}]}`, ""},
	{"Overlap/ExceptionsFirst", `{"rules": [{"route": "POST /v1/payments/batch"}, {"route": "POST /v1/payments/{id}"}, {"route": "POST /v1/{resource}/{id}"}]}`, ""},
	{"Overlap/OtherMethod", `{"rules": [{"route": "POST /v1/{a}/x"}, {"route": "PUT /v1/y/{b}"}]}`, "methods never overlap"},
	{"StoreIntent/InheritedByReplay", `{"defaults": {"store_intent": true}, "rules": [{"route": "POST /a", "on_mismatch": "replay"}]}`,
		"inherited, it is simply off where nothing would read it"},
	{"RetryAfter/EqualsLease", `{"defaults": {"retry_after": "10s"}, "rules": [{"route": "POST /a", "lease": "10s"}]}`, ""},
	{"Wait/EqualsLease", `{"defaults": {"wait": "10s"}, "rules": [{"route": "POST /a", "lease": "10s"}]}`, ""},
	{"Wait/Zero", `{"defaults": {"wait": "5s"}, "rules": [{"route": "POST /a", "wait": "0s"}]}`, "0s overrides an inherited wait"},
	{"ExcludeHeaders/Empty", `{"defaults": {"exclude_headers": ["X-Request-Id"]}, "rules": [{"route": "POST /a", "exclude_headers": []}]}`,
		"[] overrides an inherited list"},
	{"ReplayHeader/Custom", `{"rules": [{"route": "POST /a", "replay_header": "X-Content-Replayed: yes"}]}`, "only Content-* itself is reserved"},
	{"Fingerprint/HeaderHost", `{"rules": [{"route": "POST /a", "fingerprint": {"headers": ["host"]}}]}`,
		"Fingerprinter.HTTPRequest carries the host; NewRequest fails without it"},
	{"Route/DotsInSegment", `{"rules": [{"route": "POST /v1/.../a.b/.well-known"}]}`, "only . and .. are dot segments"},
}

func TestParseValid(t *testing.T) {
	for _, tc := range parseValidTests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := policy.Parse([]byte(tc.policy)); err != nil {
				t.Errorf("Parse(%s): %v (%s)", tc.policy, err, tc.reason)
			}
		})
	}
}

// TestParseCanonicalError checks that a policy that is not strict JSON
// reports the *canonical.Error itself, reachable with errors.As through the
// ParseError, without its location twice in the message.
func TestParseCanonicalError(t *testing.T) {
	_, err := policy.Parse([]byte(`{"rules": [}`))
	var ce *canonical.Error
	if !errors.As(err, &ce) {
		t.Fatalf("errors.As(%v, *canonical.Error) = false", err)
	}
	if ce.Offset != 11 || ce.Pointer != "/rules/0" || !errors.Is(err, canonical.ErrSyntax) {
		t.Errorf("canonical error = %+v", ce)
	}
	var pe *policy.ParseError
	errors.As(err, &pe)
	if got, want := pe.Findings[0].Error(), "policy: /rules/0: "+ce.Err.Error(); got != want {
		t.Errorf("Finding.Error() = %q, want %q", got, want)
	}
}

// TestParseStoreIntent checks that store_intent is on only where a rule
// rejects a mismatch: inherited by a rule that replays or executes as new,
// it would keep personal data that nothing reads.
func TestParseStoreIntent(t *testing.T) {
	pol := mustParse(t, `{"defaults": {"store_intent": true}, "rules": [
  {"route": "POST /reject"},
  {"route": "POST /replay", "on_mismatch": "replay"},
  {"route": "POST /new", "on_mismatch": "new"}
]}`)
	for path, want := range map[string]bool{"/reject": true, "/replay": false, "/new": false, "/other": true} {
		r, _ := pol.Match("POST", path)
		if got := r.StoresIntent(); got != want {
			t.Errorf("%s: StoresIntent() = %v, want %v", path, got, want)
		}
	}
}

// TestParseOffsets checks that each problem points at the offending value
// (or, for an unknown field, its name), so that lint can print a line and
// column.
func TestParseOffsets(t *testing.T) {
	src := `{"rules": [{"route": "POST /a", "ttl": "-1s", "bogus": true}]}`
	_, err := policy.Parse([]byte(src))
	var pe *policy.ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pe.Findings {
		got = append(got, p.Pointer+" @ "+src[p.Offset:p.Offset+7])
	}
	want := []string{`/rules/0/ttl @ "-1s", `, `/rules/0/bogus @ "bogus"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(err.Error(), `policy: /rules/0/ttl: invalid duration "-1s"`) || !strings.HasSuffix(err.Error(), "(and 1 more problem)") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, policy.ErrDuration) || !errors.Is(err, policy.ErrUnknownField) || errors.Is(err, policy.ErrRoute) {
		t.Errorf("errors.Is does not see exactly the problems' sentinels")
	}
}

// TestParseSettings checks how a rule's settings resolve over the defaults
// over the built-in defaults.
func TestParseSettings(t *testing.T) {
	pol := mustParse(t, `{
  "defaults": {
    "key": {"header": "x-request-key", "max_length": 64},
    "ttl": "48h",
    "wait": "2s",
    "exclude_headers": ["X-Request-Id"],
    "on_mismatch": "replay",
    "fingerprint": {"ignore": ["traceId"]},
    "methods": ["POST", "PUT"]
  },
  "rules": [
    {"route": "POST /v1/payments", "key": {"required": false}, "on_mismatch": "reject", "mismatch_status": 400,
     "cache": ["2xx", "4xx", "!429"], "lease": "1m", "replay_header": "", "store_intent": true},
    {"route": "POST /v1/refunds", "fingerprint": {"intent": ["paymentId"]}, "ttl": "1h", "on_spec_change": "new", "wait": "0s", "exclude_headers": []}
  ]
}`)
	type resolved struct {
		Pointer, Route, KeyHeader                  string
		KeyRequired, StoresIntent                  bool
		OnMismatch, OnSpecChange                   policy.Resolution
		MismatchStatus                             int
		TTL, Lease, Wait                           time.Duration
		StoresRequestID                            bool
		ReplayName, ReplayValue                    string
		Intent, Ignore                             []string
		Caches200, Caches404, Caches429, Caches500 bool
	}
	get := func(method, path string) resolved {
		r, ok := pol.Match(method, path)
		if !ok {
			t.Fatalf("no rule for %s %s", method, path)
		}
		name, value := r.ReplayHeader()
		spec := r.Fingerprinter().Spec()
		return resolved{
			r.Pointer(), r.Route(), r.KeyHeader(), r.KeyRequired(), r.StoresIntent(), r.OnMismatch(), r.OnSpecChange(),
			r.MismatchStatus(), r.TTL(), r.Lease(), r.Wait(), r.StoresHeader("X-Request-Id"), name, value, spec.Intent, spec.Ignore,
			r.Caches(200), r.Caches(404), r.Caches(429), r.Caches(500),
		}
	}
	for _, tc := range []struct {
		method, path string
		want         resolved
	}{{
		"POST", "/v1/payments", resolved{
			Pointer: "/rules/0", Route: "POST /v1/payments", KeyHeader: "X-Request-Key", KeyRequired: false, StoresIntent: true,
			OnMismatch: policy.ResolveReject, OnSpecChange: policy.ResolveReject, MismatchStatus: 400,
			TTL: 48 * time.Hour, Lease: time.Minute, Wait: 2 * time.Second, Ignore: []string{"traceId"},
			Caches200: true, Caches404: true,
		},
	}, {
		"POST", "/v1/refunds", resolved{
			Pointer: "/rules/1", Route: "POST /v1/refunds", KeyHeader: "X-Request-Key", KeyRequired: true,
			OnMismatch: policy.ResolveReplay, OnSpecChange: policy.ResolveNew, MismatchStatus: 422,
			TTL: time.Hour, Lease: 30 * time.Second, StoresRequestID: true, ReplayName: "Idempotent-Replayed", ReplayValue: "true",
			Intent: []string{"paymentId"}, Caches200: true,
		},
	}, {
		"PUT", "/v1/anything", resolved{
			Pointer: "/defaults", Route: "PUT *", KeyHeader: "X-Request-Key", KeyRequired: true,
			OnMismatch: policy.ResolveReplay, OnSpecChange: policy.ResolveReject, MismatchStatus: 422,
			TTL: 48 * time.Hour, Lease: 30 * time.Second, Wait: 2 * time.Second, ReplayName: "Idempotent-Replayed", ReplayValue: "true",
			Ignore: []string{"traceId"}, Caches200: true,
		},
	}} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, get(tc.method, tc.path)); diff != "" {
				t.Errorf("settings mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := pol.Match("PATCH", "/v1/payments"); ok {
		t.Errorf("PATCH matched, but the defaults' methods are POST and PUT")
	}
	if got := len(pol.Rules()); got != 2 {
		t.Errorf("len(Rules()) = %d, want 2", got)
	}
}

// TestParseSeed keeps the seed scenario's policy valid.
func TestParseSeed(t *testing.T) {
	pol := mustParse(t, string(readFile(t, "../testdata/policy/payments.json")))
	var routes []string
	for _, r := range pol.Rules() {
		routes = append(routes, r.Route())
	}
	want := []string{"POST /v1/payments", "POST /v1/accounts/{account}/transfers", "POST /v1/refunds"}
	if diff := cmp.Diff(want, routes); diff != "" {
		t.Errorf("seed policy routes (-want +got):\n%s", diff)
	}
}

// TestParseMaxFindings checks that a ParseError lists the first
// MaxFindings problems in document order and counts the others: each of
// 150 rules overlaps the 150 before it, and is reported once.
func TestParseMaxFindings(t *testing.T) {
	var b strings.Builder
	for j := 0; j < 150; j++ {
		fmt.Fprintf(&b, `{"route": "POST /x%d/{a}"},`, j)
	}
	for k := 0; k < 150; k++ {
		fmt.Fprintf(&b, `{"route": "POST /{a}/y%d", "colour": "blue"},`, k)
	}
	src := `{"rules": [` + strings.TrimSuffix(b.String(), ",") + `], "version": 2}`
	_, err := policy.Parse([]byte(src))
	var pe *policy.ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	if len(pe.Findings) != policy.MaxFindings || pe.Total != 301 || pe.Omitted() != 201 {
		t.Errorf("%d problems listed, Total %d, Omitted %d; want %d, 301, 201", len(pe.Findings), pe.Total, pe.Omitted(), policy.MaxFindings)
	}
	var got []string
	for _, p := range pe.Findings[:4] {
		got = append(got, p.Pointer)
	}
	want := []string{"/rules/150/route", "/rules/150/colour", "/rules/151/route", "/rules/151/colour"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first problems (-want +got):\n%s", diff)
	}
	if !strings.Contains(pe.Findings[0].Error(), "overlaps /rules/0 (POST /x0/{a})") {
		t.Errorf("Findings[0] = %v, want it to name the first rule it overlaps", pe.Findings[0])
	}
	if !strings.HasSuffix(err.Error(), "(and 300 more problems)") {
		t.Errorf("Error() = %q", err)
	}
	if !slices.IsSortedFunc(pe.Findings, func(a, b policy.Finding) int { return int(a.Offset - b.Offset) }) {
		t.Errorf("problems not in document order")
	}
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseInvalidTests {
		f.Add([]byte(tc.policy))
	}
	for _, tc := range parseValidTests {
		f.Add([]byte(tc.policy))
	}
	for _, name := range []string{"../testdata/policy/payments.json", "../testdata/policy/broken.json"} {
		f.Add(readFile(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, err := policy.Parse(data)
		if err != nil {
			var pe *policy.ParseError
			if !errors.As(err, &pe) || len(pe.Findings) == 0 || pol != nil {
				t.Fatalf("Parse error %v (%T) is not a *ParseError with problems", err, err)
			}
			if len(pe.Findings) > policy.MaxFindings || pe.Total < len(pe.Findings) {
				t.Errorf("%d problems listed of %d", len(pe.Findings), pe.Total)
			}
			for _, p := range pe.Findings {
				if p.Err == nil || p.Offset < 0 || p.Offset > int64(len(data)) || p.Pointer != "" && p.Pointer[0] != '/' {
					t.Errorf("bad problem %+v in %d bytes", p, len(data))
				}
			}
			return
		}
		for _, r := range pol.Rules() {
			method, pattern, _ := strings.Cut(r.Route(), " ")
			path := strings.NewReplacer("{", "", "}", "").Replace(pattern) // a concrete path
			if got, ok := pol.Match(method, path); !ok || !strings.HasPrefix(got.Route(), method+" ") {
				t.Errorf("rule %s does not match %s %s", r.Route(), method, path)
			}
		}
	})
}
