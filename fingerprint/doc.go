// Package fingerprint computes the fingerprint of a request's intent: a
// SHA-256 that is equal for two requests exactly when they mean the same
// operation under a declared [Spec].
//
// A retried request is rarely the same bytes: members move, whitespace and
// escapes change, 1000 becomes 1000.0, and the client stamps a new trace ID
// and timestamp. A fingerprint ignores all of that and changes with what the
// operation is: the method, the concrete path, the declared headers and
// query parameters, and the declared body fields. Compile a Spec once with
// [Compile], then call [Fingerprinter.Sum] for every request.
//
// # Paths
//
// Intent, Required and Ignore entries use a subset of the gjson path syntax
// (github.com/tidwall/gjson) with gjson's meaning. All paths are evaluated
// together in the one pass that validates the body; a test checks the walk
// against gjson's own lookups, one segment at a time.
// Given {"amountCents":1000,"destination":{"iban":"DE89…"},"items":[{"sku":"A","qty":2},{"sku":"B"}],"fav.movie":"x"}:
//
//	path             selects
//	amountCents      1000
//	destination      {"iban":"DE89…"} (the whole object)
//	destination.iban "DE89…"
//	items.1.sku      "B" (a decimal segment indexes an array, or names a member of an object)
//	items.#.sku      ["A","B"]: the segment after "#" in every element, in document order
//	items.#.qty      [2], with "items.1.qty" recorded as absent
//	fav\.movie       "x": a backslash escapes the next character
//
// A decimal segment must be written without leading zeros ("01" is
// rejected; "\01" names a member). "#" selects array elements only: on an
// object it matches nothing, where gjson would look for a member named "#"
// (write "\#" for that).
//
// Rejected at compile time, because they depend on global state or hide
// intent: modifiers ("@reverse", registered process-wide in gjson), pipes
// ("a|b"), multipaths ("[a,b]", "{a,b}"), queries ("items.#(qty>1)"),
// wildcards ("amount*", "c?de"), literals ("!true"), empty segments ("a..b",
// "..a") and a final "#" (which gjson reads as a count).
//
// # Ignore
//
// An Ignore entry of one segment, such as "traceId", drops members with that
// name at every depth. An entry of several segments, such as "meta.sentAt" or
// "items.#.note", drops exactly that path from the root ("#" matches every
// index). Ignore removes members only, never array elements (which would
// shift the others), so an entry may not end in "#" or an index; "\1"
// names a member called "1". With Intent paths, Ignore removes inside the
// selected values; an Intent path that Ignore would remove is a compile
// error.
//
// # The intent document
//
// Sum hashes a canonical JSON document (RFC 8785, in the Spec's number mode)
// that [Fingerprinter.AppendIntent] returns for explanations and [Diff]
// compares; [Fingerprinter.SumIntent] returns both, building it once. Its
// members:
//
//	absent   {path: [concrete paths]}: Intent paths that matched nothing
//	         ([path] itself) or matched nothing in some elements ("items.1.qty")
//	body     the whole body less Ignore, without Intent paths (omitted without a body)
//	headers  {lower-case name: [values in order]} for the declared headers present
//	intent   {path: value} for the Intent paths that matched
//	method   the method
//	path     the concrete path
//	query    {name: [values in order]} for the declared parameters present
//
// Absent, null, "" and [] are four different things, and a path through "#"
// keeps the position of every element through the absent list. The preimage is
// "idemprint/fingerprint/v1\n", the spec digest, "\n", then the document;
// since a canonical document has no raw newline, the framing is unambiguous.
//
// # Stability
//
// Fingerprints are a format, version 1: the same Spec and request give the
// same fingerprint in every release that writes "v1:". The golden vectors in
// testdata/golden/fingerprints.json hold this promise in the tests.
//
// # Security considerations
//
// The whole body is validated with the strict rules of package canonical,
// in the pass that selects the intent, and a body that breaks them anywhere
// has no fingerprint. gjson returns the first of two duplicate member names while
// encoding/json keeps the last, so a lenient fingerprint would read
// {"amount":10,"amount":10000} as 10 while the handler charges 10000; invalid
// UTF-8 and lone surrogates are read differently by different decoders in the
// same way. Numbers are exact by default, so 9007199254740993 and
// 9007199254740992, one double apart, are different amounts.
package fingerprint
