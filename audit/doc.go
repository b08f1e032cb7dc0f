// Package audit replays a log of real requests through an idempotency
// policy before it is switched on, and reports what the policy would have
// done: what it would have executed, replayed and rejected, which fields
// turn retries into conflicts, and a patch to the policy that stops them.
//
// Declaring which fields count as intent is the hard part of adopting a
// policy. A trace ID or a client timestamp in the fingerprint makes every
// retry look like a new request, and the rule rejects it; an amount left
// out lets a real reuse of a key through as a replay. [Run] answers both
// from the traffic a service actually gets, with the engine's own
// decisions: every request goes through [store.Acquire] against one
// [store.Memory] whose clock is the log's, and every execution is
// completed with [policy.Rule.Complete], so TTLs and leases run by the
// log's timestamps.
//
// # Logs
//
// A log is JSON Lines or a HAR 1.2 file, told apart by their content, and
// either may be gzipped. Several logs are read one after the other as one
// log: give rotated files oldest first, and merge the logs of several
// instances by time beforehand.
//
// A JSON Lines log has one request a line, an object with these members;
// any other member, or one given twice, makes the line malformed:
//
//	member    value                                                   required
//	time      RFC 3339 time the request arrived,                      yes
//	          "2025-01-06T09:00:00.250Z"
//	method    the method, "POST"                                      yes
//	path      the request target: path and query,                     yes
//	          "/v1/payments?dry_run=1"
//	headers   {"Name": "value"} or {"Name": ["value", ...]}; names    no
//	          are case-insensitive, and Host is the request's host
//	tenant    the tenant (non-empty string)                           no
//	body      the JSON body as a JSON value, or a string holding      no (no body)
//	          the body's text: {"a":1} and "{\"a\":1}" are the same
//	          body; a body that is a JSON string is written as a
//	          string holding it, "\"text\""
//	status    the response's status, 200 to 599                       no
//	duration  how long the handler ran, a Go duration, "350ms"        no (0)
//
// A HAR file is read entry by entry, without holding the file:
//
//	HAR entry member                 envelope
//	startedDateTime                  time
//	time (milliseconds)              duration
//	request.method                   method
//	request.url                      path (path and query) and the Host header
//	request.headers                  headers; ":authority" is Host, other
//	                                 pseudo-headers (":method", ...) are skipped
//	request.postData.text            body (base64 when "encoding" says so)
//	response.status                  status; 0 (no response) means none
//
// The tenant is the value of [Options].TenantHeader when it is set (a
// governed request without it is answered 400, as idemhttp answers it);
// otherwise the envelope's "tenant", and for a request that has none (and
// every HAR entry) [DefaultTenant], shared by all of them; the report says
// how many.
//
// # The replay
//
// Requests are decided in the order of their times. A log sorted by time
// is read in one streaming pass; a request may be out of order by up to
// [Options].ReorderWindow (10 s by default), as long as no more than
// [Options].ReorderRequests (100,000) wait: a request is decided once one
// timed more than the window later has been read. A request timed before
// one already decided is late: counted, listed and not decided.
//
// Each request is matched with [policy.Policy.Match] and built as a server
// builds it: an *http.Request from the envelope, given to
// [fingerprint.Fingerprinter.HTTPRequest] and [policy.Rule.NewRequest].
// [store.Acquire] decides it at its time against the in-memory store. An
// execution holds its reservation for its duration (0: it completes at
// once), so that a retry sent while it runs is answered 409 in flight;
// then it is completed with its logged status and the rule caches it or
// releases the key as the rule says. Without a logged status it is
// completed with a 2xx the rule caches, and the report counts these. A
// handler that runs past its lease may be taken over by a retry; its late
// completion is then refused by the store, and counted.
//
// # The analysis
//
// For every request that meets the record of an earlier request of its
// key, the two are compared: for a mismatch, their intent documents under
// the rule's spec, which give the paths the report lists as differing; for
// every pair whose bodies differ, retries included, their whole bodies,
// which tell which members vary between requests of one key. A member that
// varies in more than half of those pairs (and in at least two) is noise
// rather than intent: trace IDs and timestamps vary in every retry, an
// amount only in real reuses. A mismatch that differs in such members only
// is a false conflict, and the patch ignores them. The patch is checked,
// not guessed: the rule's spec is compiled with the new ignore entries
// ([fingerprint.Compile]) and the mismatching pairs fingerprinted again, so
// [Patch].Removes is exactly the mismatches that become retries, and each
// [Suggestion].Removes those that stay mismatches without it. An entry is
// a body path; one of a single segment drops that member name at every
// depth, as the fingerprint's Ignore does.
//
// Routes that no rule governs are followed too: a key that comes back on
// the same method and path within [UnruledWindow] marks its route as a
// candidate for a rule.
//
// # Limits
//
// Memory is bounded by the keys whose TTL window is open, not by the
// log's size: the store sweeps ended records, and the replay drops what it
// keeps of a key (the request that made its record) when the record's
// life ends. A line or HAR entry is at most [Options].MaxLine bytes (4 MiB
// by default; a longer line is malformed, and a HAR entry of more than
// twice the limit ends the run, since the file cannot be resynchronized);
// a body with a key at most [Options].MaxBody (1 MiB, idemhttp's default;
// a larger one is answered 413). The analysis follows at most 64 differing
// paths a pair, 32 levels deep, 1,024 paths and 256 distinct sets of
// differing paths a rule; the report lists at most 20 malformed and 20
// late requests and 1,000 routes without a rule. Messages never quote more
// than 40 bytes of the input.
//
// # Concurrency
//
// One goroutine reads the logs into batches, [Options].Workers goroutines
// parse and fingerprint them in parallel, and the caller's goroutine takes
// the batches back in the order read and decides them one by one, in time
// order; one more goroutine compares the pairs. The channels between them
// are bounded, so a slow stage holds the others back.
package audit
