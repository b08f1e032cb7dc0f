// Package fuzz holds the property tests and fuzz targets that prove, by
// machine rather than by example, what idemprint promises: retry stability
// and strictness. It has no API; everything is in its tests.
//
// # Generators
//
// gen_test.go builds JSON values as Go trees: every kind, names that sort
// differently by UTF-16 code units and by code points (U+E000 against
// U+1F600), control characters, noncharacters, numbers near 2^53, subnormal
// and beyond the double range, exponents near Exact's bound of ±999,999,999,
// deep (up to 300 levels) and wide (up to 200 members) nesting.
// spell_test.go writes one tree in many ways, as retries do: members
// shuffled, whitespace inserted, characters re-escaped (\u00e9, \/, surrogate
// pairs, upper-case hex), numbers re-spelled with the same value (1, 1.0, 1e0,
// 10E-1, 0.1e1, 1000e-3). model_test.go renders the canonical form of a tree
// from RFC 8785 alone, and judges raw input with encoding/json plus scanners
// for what encoding/json lets through.
//
// # Properties
//
// Each runs 10,000 cases; -props.scale=N multiplies that, -props.seed=S
// replays a run.
//
//	TestIdempotence                          canon(canon(x)) = canon(x), both modes
//	TestRetryStability                       canon(r(x)) = canon(x) = model; Sum(r(x)) = Sum(x)
//	TestCanonicalEqualityIsSemanticEquality  canon(a) = canon(b) iff a and b decode to equal values
//	TestIntent                               counted changes change the fingerprint, others do not
//	TestOutputValidity                       canon(x) is valid JSON of x's value, ≤ len(x) + 17 per number
//
// # Fuzz targets
//
//	FuzzCanonical         accept iff the model does; output = model, valid, idempotent
//	FuzzExactVsJCS        same bytes where every number is a shortest double
//	FuzzFingerprintRetry  re-spellings keep, intent changes change the fingerprint
//
// Their corpora live in testdata/fuzz/<Target>/ in this directory, where
// go test finds them; crashers found by fuzzing land there too and stay as
// regressions. Run one target with
//
//	go test ./fuzz -run='^$' -fuzz='^FuzzCanonical$' -fuzztime=20s
//
// and all of them for hours with fuzz/campaign.sh.
package fuzz
