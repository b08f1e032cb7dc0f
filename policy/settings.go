package policy

import (
	"net/http"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
)

// Built-in defaults, used for whatever neither a rule nor the defaults set.
const (
	defaultTTL            = 24 * time.Hour
	defaultLease          = 30 * time.Second
	defaultMismatchStatus = http.StatusUnprocessableEntity
	defaultReplayName     = "Idempotent-Replayed"
	defaultReplayValue    = "true"
	maxKeyLength          = 1024 // the largest max_length a policy may set
)

// setting is one setting of a rule or of the defaults, declared once:
// what Parse reads and checks, what a [Rule] takes, and its row of the
// settings table in the package documentation.
type setting struct {
	// name is the setting's path in its object: "ttl", or "key.header"
	// for member header of the object key.
	name string
	// value and def are its row of the documentation's table: what it
	// takes and its default, one line of text each.
	value, def []string
	// zero is the built-in default, of the type parse returns.
	zero any
	// parse reads the value at n (ptr is its JSON Pointer), reporting
	// what is wrong with it; ok is false when it did.
	parse func(p *parser, ptr string, n *node) (v any, ok bool)
	// set gives a rule the setting's resolved value.
	set func(r *Rule, v any)
}

// settingTable holds every setting of a rule and of the defaults, in the
// order of the documentation's table. A rule's "route" and the defaults'
// "methods" are not settings: they say what the object governs.
var settingTable = [...]setting{
	{
		name:  "key.header",
		value: []string{"header name, not one net/http moves", "out of Request.Header (Host,", "Content-Length, Transfer-Encoding,", "Trailer) nor a hop-by-hop one", "(Connection, TE, Upgrade, ...)"},
		def:   []string{`"Idempotency-Key"`},
		zero:  DefaultKeyHeader,
		parse: opt((*parser).keyHeader),
		set:   func(r *Rule, v any) { r.keyHeader = http.CanonicalHeaderKey(v.(string)) },
	},
	{
		name:  "key.required",
		value: []string{"false: a request without a key", "passes through"},
		def:   []string{"true"},
		zero:  true,
		parse: opt((*parser).boolean),
		set:   func(r *Rule, v any) { r.keyRequired = v.(bool) },
	},
	{
		name:  "key.syntax",
		value: []string{`"printable" (1 to max_length of`, `0x20-0x7E, no outer space) or "uuid"`, "(RFC 9562 text form; either case, the", "same key)"},
		def:   []string{`"printable"`},
		zero:  syntaxPrintable,
		parse: opt((*parser).keySyntax),
		set:   func(r *Rule, v any) { r.keySyntax = v.(keySyntax) },
	},
	{
		name:  "key.max_length",
		value: []string{"1 to 1024"},
		def:   []string{"255"},
		zero:  defaultKeyMaxLength,
		parse: opt((*parser).keyMaxLength),
		set:   func(r *Rule, v any) { r.keyMaxLength = v.(int) },
	},
	{
		name:  "scope.route",
		value: []string{"true: the rule's endpoint is part of", "the storage key"},
		def:   []string{"false (tenant and", "key only)"},
		zero:  false,
		parse: opt((*parser).boolean),
		set:   func(r *Rule, v any) { r.scopeRoute = v.(bool) },
	},
	{
		name:  "fingerprint",
		value: []string{"a fingerprint.Spec: intent, ignore,", "required, numbers, headers, query;", "headers as key.header allows, and", "Host (see Rule.NewRequest)"},
		def:   []string{"the whole body"},
		zero:  (*fingerprint.Fingerprinter)(nil), // the rule compiles the empty spec
		parse: func(p *parser, ptr string, n *node) (any, bool) { fp := p.spec(ptr, n); return fp, fp != nil },
		set:   func(r *Rule, v any) { r.fp = v.(*fingerprint.Fingerprinter) },
	},
	{
		name:  "on_mismatch",
		value: []string{`"reject", "replay" or "new"`},
		def:   []string{`"reject"`},
		zero:  ResolveReject,
		parse: opt((*parser).resolution),
		set:   func(r *Rule, v any) { r.onMismatch = v.(Resolution) },
	},
	{
		name:  "mismatch_status",
		value: []string{"422, 409 or 400"},
		def:   []string{"422"},
		zero:  defaultMismatchStatus,
		parse: opt((*parser).mismatchStatus),
		set:   func(r *Rule, v any) { r.mismatchStatus = v.(int) },
	},
	{
		name:  "on_spec_change",
		value: []string{`"reject", "replay" or "new"`},
		def:   []string{`"reject"`},
		zero:  ResolveReject,
		parse: opt((*parser).resolution),
		set:   func(r *Rule, v any) { r.onSpecChange = v.(Resolution) },
	},
	{
		name:  "cache",
		value: []string{"statuses stored and replayed:", `classes, codes, "!" to exclude,`, `such as ["2xx", "4xx", "!429"]`},
		def:   []string{`["2xx"]`},
		zero:  defaultCache,
		parse: opt((*parser).cache),
		set:   func(r *Rule, v any) { r.cache = v.(statusSet) },
	},
	{
		name:  "ttl",
		value: []string{"Go duration a response is kept", `(positive, unsigned: "24h", "90m")`},
		def:   []string{`"24h"`},
		zero:  defaultTTL,
		parse: opt((*parser).positiveDuration),
		set:   func(r *Rule, v any) { r.ttl = v.(time.Duration) },
	},
	{
		name:  "lease",
		value: []string{"Go duration a reservation holds the", "key; shorter than ttl"},
		def:   []string{`"30s"`},
		zero:  defaultLease,
		parse: opt((*parser).positiveDuration),
		set:   func(r *Rule, v any) { r.lease = v.(time.Duration) },
	},
	{
		name:  "retry_after",
		value: []string{"whole seconds answered to a request", "that meets a reservation; at most", "the lease"},
		def:   []string{"the rest of the lease"},
		zero:  time.Duration(0),
		parse: opt((*parser).retryAfter),
		set:   func(r *Rule, v any) { r.retryAfter = v.(time.Duration) },
	},
	{
		name:  "wait",
		value: []string{"Go duration a request that meets the", "running reservation of an equal", "request may wait for its result", `before its 409 (see Rule.Wait); "0s"`, "or more, at most the lease: past the", "lease the reservation is stale and the", "request takes it over"},
		def:   []string{`"0s" (answer at once)`},
		zero:  time.Duration(0),
		parse: opt((*parser).nonNegativeDuration),
		set:   func(r *Rule, v any) { r.wait = v.(time.Duration) },
	},
	{
		name:  "replay_header",
		value: []string{`"Name: value" added to replays, or "";`, "not hop-by-hop (Connection, TE,", "Transfer-Encoding, ...) nor Content-*,", "ETag or Last-Modified"},
		def:   []string{`"Idempotent-Replayed: true"`},
		zero:  [2]string{defaultReplayName, defaultReplayValue},
		parse: opt((*parser).replayHeader),
		set:   func(r *Rule, v any) { h := v.([2]string); r.replayName, r.replayValue = h[0], h[1] },
	},
	{
		name:  "store_intent",
		value: []string{"true: keep the intent projection to", "name differing fields; only with", `on_mismatch "reject"`},
		def:   []string{"false (it may hold", "personal data)"},
		zero:  false,
		parse: opt((*parser).boolean),
		// Intent projections serve only to list the differing fields of
		// a key-reuse rejection; inherited by a rule that does not reject,
		// they would keep personal data for nothing. (on_mismatch is set
		// before: it comes first in the table.)
		set: func(r *Rule, v any) { r.storeIntent = v.(bool) && r.onMismatch == ResolveReject },
	},
	{
		name:  "exclude_headers",
		value: []string{"response header names never stored", `for replay, such as ["X-Request-Id"]:`, "tokens, each once, in any case; not", "one that is never stored anyway"},
		def:   []string{"[] (none beyond those", "never stored)"},
		zero:  []string(nil),
		parse: opt((*parser).excludeHeaders),
		set: func(r *Rule, v any) {
			if names := v.([]string); len(names) > 0 {
				r.exclude = make(map[string]bool, len(names))
				for _, h := range names {
					r.exclude[h] = true
				}
			}
		},
	},
}

// routeRow is the documentation table's row of a rule's route, which is
// not a setting.
var routeRow = setting{
	name:  "route",
	value: []string{`"METHOD /pattern": segments are`, "literals or {param}, which matches", "any one non-empty segment; no empty,", `"." or ".." segment, which a router`, "cleans away"},
	def:   []string{"(required in a rule)"},
}

// opt adapts a parser's method that returns nil for a value it reported
// to the shape of [setting].parse.
func opt[T any](f func(*parser, string, *node) *T) func(*parser, string, *node) (any, bool) {
	return func(p *parser, ptr string, n *node) (any, bool) {
		if v := f(p, ptr, n); v != nil {
			return *v, true
		}
		return nil, false
	}
}

// settingByName returns the setting named name ("ttl", "key.header"), or
// nil when there is none.
func settingByName(name string) *setting {
	for i := range settingTable {
		if settingTable[i].name == name {
			return &settingTable[i]
		}
	}
	return nil
}

// settingMembers returns the members that an object of settings may
// have, in the table's order: "key" once for all of key's settings.
func settingMembers() []string {
	var names []string
	for _, st := range settingTable {
		m, _, _ := strings.Cut(st.name, ".")
		if len(names) == 0 || names[len(names)-1] != m {
			names = append(names, m)
		}
	}
	return names
}

// settings are the settings that one object of the policy (a rule or the
// defaults) sets, by name; a setting it leaves out is absent.
type settings struct {
	ptr  string
	node *node
	set  map[string]any
}

// has reports whether s sets the named setting.
func (s *settings) has(name string) bool {
	_, ok := s.set[name]
	return ok
}

// resolvedAny returns the value of st in s, else in parent, else its
// built-in default.
func resolvedAny(st *setting, s, parent *settings) any {
	if v, ok := s.set[st.name]; ok {
		return v
	}
	if v, ok := parent.set[st.name]; ok {
		return v
	}
	return st.zero
}

// resolved returns the named setting's value in s, else in parent, else
// its built-in default.
func resolved[T any](name string, s, parent *settings) T {
	return resolvedAny(settingByName(name), s, parent).(T)
}

// settings parses the settings of the object n at ptr: each member
// named by the table, and each member of the objects whose members it
// names ("key").
func (p *parser) settings(ptr string, n *node) settings {
	s := settings{ptr: ptr, node: n, set: map[string]any{}}
	for _, m := range n.members {
		mp := appendToken(ptr, m.name)
		var inner []string // the settings that are members of m
		for i := range settingTable {
			st := &settingTable[i]
			if st.name == m.name {
				if v, ok := st.parse(p, mp, m.val); ok {
					s.set[st.name] = v
				}
			} else if sub, ok := strings.CutPrefix(st.name, m.name+"."); ok {
				inner = append(inner, sub)
			}
		}
		if len(inner) == 0 || !p.object(mp, m.val, inner...) {
			continue
		}
		for _, im := range m.val.members {
			name := m.name + "." + im.name
			if st := settingByName(name); st != nil { // another is reported unknown
				if v, ok := st.parse(p, appendToken(mp, im.name), im.val); ok {
					s.set[name] = v
				}
			}
		}
	}
	return s
}

// settingsDoc returns the settings table of the package documentation, as
// the table declares it: a header, the route, then each setting.
func settingsDoc() []string {
	const nameWidth, valueWidth = 18, 39
	pad := func(s string, n int) string {
		if len(s) >= n {
			return s + " "
		}
		return s + strings.Repeat(" ", n-len(s))
	}
	lines := []string{pad("field", nameWidth) + pad("value", valueWidth) + "default"}
	for _, st := range append([]setting{routeRow}, settingTable[:]...) {
		for i := range max(len(st.value), len(st.def)) {
			name, value, def := "", "", ""
			if i == 0 {
				name = st.name
			}
			if i < len(st.value) {
				value = st.value[i]
			}
			if i < len(st.def) {
				def = st.def[i]
			}
			lines = append(lines, strings.TrimRight(pad(name, nameWidth)+pad(value, valueWidth)+def, " "))
		}
	}
	return lines
}
