package redisstore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/redis/go-redis/v9"
)

// testPolicy has a rule that executes mismatches as new operations, so
// that its requests have two storage keys. Its records outlive the
// slowest test run; every test deletes its keys when it ends.
const testPolicy = `{
  "defaults": {"ttl": "1h", "lease": "1m", "methods": []},
  "rules": [{"route": "POST /pay", "fingerprint": {"intent": ["amount"]}, "on_mismatch": "new"}]
}`

func testRule(t testing.TB) *policy.Rule {
	t.Helper()
	pol, err := policy.Parse([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/pay")
	return rule
}

func testRequest(t testing.TB, rule *policy.Rule, tenant, key string, amount int) policy.Request {
	t.Helper()
	req, err := rule.NewRequest(tenant, fingerprint.Request{
		Method: "POST", Path: "/pay",
		Header: http.Header{"Idempotency-Key": {key}},
		Body:   []byte(`{"amount":` + strconv.Itoa(amount) + `}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// execute acquires req and fails unless it executes.
func execute(t *testing.T, s store.Store, rule *policy.Rule, req policy.Request) store.Claim {
	t.Helper()
	c, err := store.Acquire(context.Background(), s, rule, req)
	if err != nil || c.Decision.Action != policy.Execute && c.Decision.Action != policy.ExecuteAsNew {
		t.Fatalf("Acquire = %v in %d calls, %v; want execute", c.Decision.Action, c.Calls, err)
	}
	return c
}

// complete completes the claim with a 201 and writes it.
func complete(t *testing.T, s store.Store, rule *policy.Rule, c store.Claim) policy.Record {
	t.Helper()
	done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), done, store.Guard{}); err != nil {
		t.Fatalf("Write of the completion: %v", err)
	}
	return done
}

// offline returns a Store whose client never connects: for what needs no
// server.
func offline(t *testing.T, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Both storage keys of a request have one hash tag, made of the primary
// key alone; the storage key follows it unchanged.
func TestKey(t *testing.T) {
	rule := testRule(t)
	s := offline(t, redisstore.Options{Prefix: "app:idem:"})
	a := testRequest(t, rule, "t{1}", "k}{", 1)
	b := testRequest(t, rule, "t{1}", "k}{", 2) // another fingerprint: another new identity
	pa, na, err := rule.StorageKeys(a)
	if err != nil {
		t.Fatal(err)
	}
	_, nb, _ := rule.StorageKeys(b)
	tag := func(k string) string {
		rest, ok := strings.CutPrefix(k, "app:idem:{")
		if !ok || len(rest) < 9 || rest[8] != '}' {
			t.Fatalf("key %q is not prefix, {8 characters}, storage key", k)
		}
		return rest[:8]
	}
	for _, sk := range []string{pa, na, nb} {
		k := s.Key(sk)
		if !strings.HasSuffix(k, "}"+sk) || strings.ContainsAny(tag(k), "{}") {
			t.Errorf("Key(%q) = %q, want the prefix, a tag without braces, then the storage key", sk, k)
		}
		if tag(k) != tag(s.Key(pa)) {
			t.Errorf("Key(%q) has tag %q, the primary key %q", sk, tag(k), tag(s.Key(pa)))
		}
	}
	other := testRequest(t, rule, "t{1}", "k2", 1)
	po, _, _ := rule.StorageKeys(other)
	if tag(s.Key(po)) == tag(s.Key(pa)) {
		t.Errorf("two requests' keys share the tag %q", tag(s.Key(po)))
	}
}

// micros is a time field: µs since the epoch, "" for the zero time.
func micros(tm time.Time) string {
	if tm.IsZero() {
		return ""
	}
	return strconv.FormatInt(tm.UnixMicro(), 10)
}

// A record is a string: the header "2 g s l e n\n" (n a reservation's
// nonce in hex, "" after the next write), then the payload; the key
// expires at the end of the record's life, rounded up to the millisecond.
func TestLayout(t *testing.T) {
	client := nodeClient(t)
	s := newStore(t, client)
	ctx := context.Background()
	rule := testRule(t)
	c := execute(t, s, rule, testRequest(t, rule, "acme", "k1", 1))
	check := func(stage string, rec *policy.Record, wantNonce bool) {
		t.Helper()
		k := s.Key(rec.StorageKey)
		got, err := client.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		header, payload, _ := strings.Cut(got, "\n")
		fields := strings.Split(header, " ")
		if len(fields) != 6 {
			t.Fatalf("%s: header %q, want 6 fields", stage, header)
		}
		if n := fields[5]; wantNonce && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(n) || !wantNonce && n != "" {
			t.Errorf("%s: nonce %q, want a nonce %v", stage, n, wantNonce)
		}
		want := []string{"2", strconv.FormatUint(rec.Generation, 10), strconv.Itoa(int(rec.State)),
			micros(rec.LeaseExpiry), micros(rec.ExpiresAt)}
		if d := cmp.Diff(want, fields[:5]); d != "" {
			t.Errorf("%s: header fields mismatch (-want +got):\n%s", stage, d)
		}
		if want := string(store.AppendPayload(nil, rec)); payload != want {
			t.Errorf("%s: payload %q, want %q", stage, payload, want)
		}
		end := max(rec.ExpiresAt.UnixMicro(), rec.LeaseExpiry.UnixMicro())
		at, err := client.Do(ctx, "PEXPIRETIME", k).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if want := (end + 999) / 1000; at != want {
			t.Errorf("%s: PEXPIRETIME %d, want %d (the end of its life %d µs, rounded up)", stage, at, want, end)
		}
	}
	check("reserved", &c.Record, true)
	renewed, err := rule.Renew(&c.Record, c.Now.Add(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, renewed, store.Guard{}); err != nil {
		t.Fatal(err)
	}
	check("renewed", &renewed, false)
	released, err := rule.Release(&renewed)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, released, store.Guard{}); err != nil {
		t.Fatal(err)
	}
	check("released", &released, false)
}

// Values that do not parse, v1 hashes whose fields do not, and keys of
// other types make every operation on the key fail with ErrCorrupt, never
// a replay or an overwrite; Delete recovers.
func TestCorruptFields(t *testing.T) {
	client := nodeClient(t)
	ctx := context.Background()
	rule := testRule(t)
	// header replaces the header of the value under k.
	header := func(h string) func(k string) error {
		return func(k string) error {
			v, err := client.Get(ctx, k).Result()
			if err != nil {
				return err
			}
			_, payload, _ := strings.Cut(v, "\n")
			return client.Set(ctx, k, h+payload, redis.KeepTTL).Err()
		}
	}
	// v1 writes the record under k as a v1 hash, with change applied to
	// its fields.
	v1 := func(change func(f map[string]string)) func(k string) error {
		return func(k string) error {
			f, err := v1Fields(ctx, client, k)
			if err != nil {
				return err
			}
			change(f)
			return writeV1(ctx, client, k, f)
		}
	}
	far := strconv.FormatInt(time.Now().Add(time.Hour).UnixMicro(), 10)
	for _, tc := range []struct {
		name   string
		damage func(k string) error
		// payload: only the payload is damaged, which Go decodes and
		// the scripts do not: Read and Reserve fail, writes are fenced
		// by the generation alone.
		payload bool
	}{
		{"Value/Version", header("3 2 2  " + far + " \n"), false},
		{"Value/Generation/Zero", header("2 0 2  " + far + " \n"), false},
		{"Value/Generation/LeadingZero", header("2 0123 2  " + far + " \n"), false},
		{"Value/Generation/Beyond2^53", header("2 9007199254740993 2  " + far + " \n"), false},
		{"Value/State/Unknown", header("2 2 3  " + far + " \n"), false},
		{"Value/Lease/LeadingZero", header("2 2 2 0" + far + " " + far + " \n"), false},
		{"Value/Expiry/Beyond2^53", header("2 2 2  9007199254740992 \n"), false},
		{"Value/Nonce/NotHex", header("2 2 2  " + far + " nonce\n"), false},
		{"Value/NoHeaderEnd", header("2 2 2  " + far + " "), false},
		{"Value/Payload", func(k string) error { return client.Append(ctx, k, "x").Err() }, true},
		{"V1/Generation/NotDecimal", v1(func(f map[string]string) { f["g"] = "x1" }), false},
		{"V1/Generation/Zero", v1(func(f map[string]string) { f["g"] = "0" }), false},
		{"V1/Generation/LeadingZero", v1(func(f map[string]string) { f["g"] = "0123" }), false},
		{"V1/Generation/Beyond2^53", v1(func(f map[string]string) { f["g"] = "9007199254740993" }), false},
		{"V1/State/Unknown", v1(func(f map[string]string) { f["s"] = "3" }), false},
		{"V1/Lease/Exponent", v1(func(f map[string]string) { f["l"] = "1e15" }), false},
		{"V1/Expiry/Negative", v1(func(f map[string]string) { f["e"] = "-1" }), false},
		{"V1/Payload/Missing", v1(func(f map[string]string) { delete(f, "r") }), false},
		{"V1/Payload/Damaged", v1(func(f map[string]string) { f["r"] += "x" }), true},
		{"OtherType/List", func(k string) error {
			client.Del(ctx, k)
			return client.RPush(ctx, k, "a").Err()
		}, false},
		{"OtherType/Set", func(k string) error {
			client.Del(ctx, k)
			return client.SAdd(ctx, k, "a").Err()
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, client)
			req := testRequest(t, rule, "acme", "k1", 1)
			c := execute(t, s, rule, req)
			done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
			if err != nil {
				t.Fatal(err)
			}
			// A completed record: a damaged one must not replay.
			if err := s.Write(ctx, done, store.Guard{}); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(s.Key(c.Record.StorageKey)); err != nil {
				t.Fatal(err)
			}
			isCorrupt := func(op string, err error) {
				t.Helper()
				var se *store.Error
				if !errors.Is(err, store.ErrCorrupt) || !errors.As(err, &se) || se.StorageKey != c.Record.StorageKey {
					t.Errorf("%s: error %v, want ErrCorrupt naming the key", op, err)
				}
			}
			_, err = s.Read(ctx, c.Record.StorageKey)
			isCorrupt("Read", err)
			_, err = store.Acquire(ctx, s, rule, req)
			isCorrupt("Acquire", err)
			if tc.payload {
				return
			}
			again := done
			again.Generation++
			isCorrupt("Write", s.Write(ctx, again, store.Guard{}))
			// A write to the other key guarded by the damaged one.
			_, nk, _ := rule.StorageKeys(req)
			other := c.Record
			other.StorageKey, other.Generation = nk, 1
			err = s.Write(ctx, other, store.Guard{StorageKey: c.Record.StorageKey})
			if !errors.Is(err, store.ErrCorrupt) {
				t.Errorf("Write guarded by a corrupt record: error %v, want ErrCorrupt", err)
			}
			if err := s.Delete(ctx, c.Record.StorageKey); err != nil {
				t.Fatalf("Delete of a corrupt record: %v", err)
			}
			execute(t, s, rule, req)
		})
	}
}

// v1Fields returns the fields of the v1 hash of the record under k, which
// holds a value.
func v1Fields(ctx context.Context, client *redis.Client, k string) (map[string]string, error) {
	v, err := client.Get(ctx, k).Result()
	if err != nil {
		return nil, err
	}
	header, payload, _ := strings.Cut(v, "\n")
	h := strings.Split(header, " ")
	n := ""
	if h[5] != "" {
		b, err := hex.DecodeString(h[5])
		if err != nil {
			return nil, err
		}
		n = string(b)
	}
	return map[string]string{"g": h[1], "s": h[2], "l": h[3], "e": h[4], "r": payload, "n": n}, nil
}

// writeV1 replaces the key k with a v1 hash of the fields f, expiring as
// v1 expired it; the hash of an expired record is left without expiry.
func writeV1(ctx context.Context, client *redis.Client, k string, f map[string]string) error {
	at, err := client.Do(ctx, "PEXPIRETIME", k).Int64()
	if err != nil {
		return err
	}
	_, err = client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k)
		p.HSet(ctx, k, f)
		if at > time.Now().UnixMilli() {
			p.PExpireAt(ctx, k, time.UnixMilli(at))
		}
		return nil
	})
	return err
}

// lostReply is a go-redis hook that sends a matching command twice, as
// go-redis's retries do when the first reply is lost; the caller sees the
// second reply.
type lostReply struct {
	match func(cmd redis.Cmder) bool
}

func (lostReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h lostReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.match(cmd) {
			_ = next(ctx, cmd)
		}
		return next(ctx, cmd)
	}
}
func (lostReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Reserve whose first reply was lost and that the client sends again
// finds its own reservation and reports it reserved, instead of a 409 for
// itself until its lease lapses. A retried Write finds its record.
func TestRetriedCalls(t *testing.T) {
	retrying := redis.NewClient(nodeOptions(t))
	t.Cleanup(func() { retrying.Close() })
	retrying.AddHook(lostReply{match: func(cmd redis.Cmder) bool {
		name := cmd.Name()
		return name == "evalsha" || name == "eval"
	}})
	s := newStore(t, retrying)
	ctx := context.Background()
	rule := testRule(t)
	c := execute(t, s, rule, testRequest(t, rule, "acme", "k1", 1)) // sent twice
	got, err := s.Read(ctx, c.Record.StorageKey)
	if err != nil || got == nil || got.Generation != c.Record.Generation || !got.LeaseExpiry.Equal(c.Record.LeaseExpiry) {
		t.Fatalf("Read = %+v, %v; want the reservation of generation %d", got, err, c.Record.Generation)
	}
	complete(t, s, rule, c) // sent twice
	// Another call (another nonce) is not taken for the first.
	c2, err := store.Acquire(ctx, s, rule, testRequest(t, rule, "acme", "k1", 1))
	if err != nil || c2.Decision.Action != policy.Replay {
		t.Errorf("a retry after completion = %v, %v; want replay", c2.Decision.Action, err)
	}
}

// A Reserve sent again after its reservation was written over (renewed,
// taken over) does not find itself: every write clears the nonce.
func TestReplayedReserveAfterWrite(t *testing.T) {
	client := nodeClient(t)
	recording := redis.NewClient(nodeOptions(t))
	t.Cleanup(func() { recording.Close() })
	var first redis.Cmder
	recording.AddHook(lostReply{match: func(cmd redis.Cmder) bool {
		if first == nil && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			first = cmd
		}
		return false
	}})
	s := newStore(t, recording)
	ctx := context.Background()
	rule := testRule(t)
	c := execute(t, s, rule, testRequest(t, rule, "acme", "k1", 1))
	renewed, err := rule.Renew(&c.Record, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, renewed, store.Guard{}); err != nil {
		t.Fatal(err)
	}
	again := redis.NewCmd(ctx, first.Args()...)
	if err := client.Process(ctx, again); err != nil {
		t.Fatalf("sending the reservation's script again: %v", err)
	}
	reply, _ := again.Slice()
	if len(reply) == 0 || reply[0] != int64(0) {
		t.Errorf("the reservation's call sent again after a renewal replied %v, want code 0 (held)", reply)
	}
}

// Times and generations beyond what the scripts keep exactly are refused
// before anything is sent.
func TestWriteRange(t *testing.T) {
	s := offline(t, redisstore.Options{})
	rule := testRule(t)
	req := testRequest(t, rule, "acme", "k1", 1)
	pk, _, _ := rule.StorageKeys(req)
	base := policy.Record{StorageKey: pk, Generation: 2, State: policy.StateCompleted, Tenant: "acme", ExpiresAt: time.Now()}
	for _, tc := range []struct {
		name   string
		change func(r *policy.Record)
	}{
		{"ExpiryBefore1970", func(r *policy.Record) { r.ExpiresAt = time.Unix(-1, 0) }},
		{"ExpiryAfter2255", func(r *policy.Record) { r.ExpiresAt = time.UnixMicro(1 << 53) }},
		{"LeaseBefore1970", func(r *policy.Record) { r.LeaseExpiry = time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC) }},
		{"GenerationBeyond2^53", func(r *policy.Record) { r.Generation = 1<<53 + 1 }},
	} {
		rec := base
		tc.change(&rec)
		if err := s.Write(context.Background(), rec, store.Guard{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: Write error %v, want ErrInvalid", tc.name, err)
		}
	}
}

// New refuses what would break the key layout.
func TestNew(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		opts   redisstore.Options
	}{
		{"NilClient", nil, redisstore.Options{}},
		{"PrefixOpenBrace", c, redisstore.Options{Prefix: "a{"}},
		{"PrefixCloseBrace", c, redisstore.Options{Prefix: "}"}},
		{"NegativeScanCount", c, redisstore.Options{ScanCount: -1}},
	} {
		s, err := redisstore.New(tc.client, tc.opts)
		var se *store.Error
		if s != nil || !errors.Is(err, store.ErrInvalid) || !errors.As(err, &se) || se.Op != "new" {
			t.Errorf("%s: New = %v, %v; want an ErrInvalid of op new", tc.name, s, err)
		}
	}
	if _, err := redisstore.New(c, redisstore.Options{Prefix: "idemprint:", ScanCount: 10}); err != nil {
		t.Errorf("New with valid options: %v", err)
	}
}

// A server that cannot be reached is ErrUnavailable with go-redis's error
// as the cause, for every operation.
func TestUnreachable(t *testing.T) {
	s := offline(t, redisstore.Options{})
	rule := testRule(t)
	req := testRequest(t, rule, "acme", "k1", 1)
	ctx := context.Background()
	_, err := store.Acquire(ctx, s, rule, req)
	check := func(op string, err error) {
		t.Helper()
		var se *store.Error
		if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, &se) || se.Err == nil {
			t.Errorf("%s: error %v, want ErrUnavailable with a cause", op, err)
		}
	}
	check("Acquire", err)
	pk, _, _ := rule.StorageKeys(req)
	_, err = s.Read(ctx, pk)
	check("Read", err)
	check("Delete", s.Delete(ctx, pk))
	check("Write", s.Write(ctx, policy.Record{StorageKey: pk, Generation: 1}, store.Guard{}))
	check("Ping", s.Ping(ctx))
	_, err = s.PurgeTenant(ctx, "acme")
	check("PurgeTenant", err)
}

// A deployment upgraded in place holds v1 hashes: every operation reads
// them by the v1 rules and judges them as v1 did, so no request executes
// again and no record is lost; a write replaces a hash with a value.
func TestV1Records(t *testing.T) {
	client := nodeClient(t)
	ctx := context.Background()
	rule := testRule(t)
	req := testRequest(t, rule, "acme", "k1", 1)
	pk, nk, _ := rule.StorageKeys(req)
	// toV1 turns the record under storage key sk into a v1 hash, with
	// change applied to its fields.
	toV1 := func(t *testing.T, s *redisstore.Store, sk string, change func(f map[string]string)) {
		t.Helper()
		k := s.Key(sk)
		f, err := v1Fields(ctx, client, k)
		if err != nil {
			t.Fatal(err)
		}
		change(f)
		if err := writeV1(ctx, client, k, f); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(map[string]string) {}
	keyType := func(t *testing.T, s *redisstore.Store, sk, want string) {
		t.Helper()
		if got := client.Type(ctx, s.Key(sk)).Val(); got != want {
			t.Errorf("key of %q is a %s, want a %s", sk, got, want)
		}
	}
	acquire := func(t *testing.T, s *redisstore.Store, want policy.Action) store.Claim {
		t.Helper()
		c, err := store.Acquire(ctx, s, rule, req)
		if err != nil || c.Decision.Action != want {
			t.Fatalf("Acquire = %v, %v; want %v", c.Decision.Action, err, want)
		}
		return c
	}
	us := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).UnixMicro(), 10) }

	t.Run("Completed", func(t *testing.T) {
		s := newStore(t, client)
		done := complete(t, s, rule, execute(t, s, rule, req))
		toV1(t, s, pk, unchanged)
		got, err := s.Read(ctx, pk)
		if err != nil || got == nil {
			t.Fatalf("Read = %v, %v", got, err)
		}
		// Compared as stored: the fields and the payload's encoding.
		stored := func(r *policy.Record) []string {
			return []string{strconv.FormatUint(r.Generation, 10), strconv.Itoa(int(r.State)),
				micros(r.LeaseExpiry), micros(r.ExpiresAt), string(store.AppendPayload(nil, r))}
		}
		if d := cmp.Diff(stored(&done), stored(got)); d != "" {
			t.Errorf("Read of the v1 hash mismatch (-want +got):\n%s", d)
		}
		acquire(t, s, policy.Replay)
		// The same completion again, as a retried Write sends it.
		if err := s.Write(ctx, done, store.Guard{}); err != nil {
			t.Errorf("Write of the identical record: %v", err)
		}
		keyType(t, s, pk, "hash")
	})
	t.Run("InFlight", func(t *testing.T) {
		s := newStore(t, client)
		c := execute(t, s, rule, req)
		toV1(t, s, pk, unchanged)
		acquire(t, s, policy.Reject) // 409: in flight
		// Its holder completes it: the hash becomes a value.
		done := complete(t, s, rule, c)
		keyType(t, s, pk, "string")
		got, err := s.Read(ctx, pk)
		if err != nil || got == nil || got.Generation != done.Generation || got.State != policy.StateCompleted {
			t.Fatalf("Read = %+v, %v; want the completion of generation %d", got, err, done.Generation)
		}
		acquire(t, s, policy.Replay)
	})
	t.Run("LeaseLapsed", func(t *testing.T) {
		s := newStore(t, client)
		c := execute(t, s, rule, req)
		toV1(t, s, pk, func(f map[string]string) { f["l"] = us(-time.Second) })
		taken := acquire(t, s, policy.Execute)
		if taken.Record.Generation != c.Record.Generation+1 {
			t.Errorf("takeover of generation %d, want %d", taken.Record.Generation, c.Record.Generation+1)
		}
		keyType(t, s, pk, "string")
		// The holder whose lease lapsed cannot complete.
		done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, done, store.Guard{}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Write of the lapsed holder: error %v, want ErrConflict", err)
		}
	})
	t.Run("Ended", func(t *testing.T) {
		// A hash whose life ended that Redis has not removed yet, of a
		// generation ahead of the clock: the next one is above it.
		s := newStore(t, client)
		complete(t, s, rule, execute(t, s, rule, req))
		g := time.Now().Add(time.Hour).UnixMicro()
		toV1(t, s, pk, func(f map[string]string) {
			f["g"], f["l"], f["e"] = strconv.FormatInt(g, 10), "", us(-time.Second)
		})
		c := acquire(t, s, policy.Execute)
		if c.Record.Generation != uint64(g)+1 {
			t.Errorf("reservation of generation %d, want %d", c.Record.Generation, g+1)
		}
	})
	t.Run("Guard", func(t *testing.T) {
		s := newStore(t, client)
		c := execute(t, s, rule, req)
		toV1(t, s, pk, unchanged)
		other := c.Record
		other.StorageKey, other.Generation = nk, 1
		err := s.Write(ctx, other, store.Guard{StorageKey: pk, Generation: c.Record.Generation + 1})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Write guarded by another generation: error %v, want ErrConflict", err)
		}
		if err := s.Write(ctx, other, store.Guard{StorageKey: pk, Generation: c.Record.Generation}); err != nil {
			t.Errorf("Write guarded by the v1 reservation: %v", err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s := newStore(t, client)
		complete(t, s, rule, execute(t, s, rule, req))
		toV1(t, s, pk, unchanged)
		if err := s.Delete(ctx, pk); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if n := client.Exists(ctx, s.Key(pk)).Val(); n != 0 {
			t.Error("the key is still there")
		}
		if err := s.Delete(ctx, pk); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Delete again: error %v, want ErrNotFound", err)
		}
	})
	t.Run("Purge", func(t *testing.T) {
		s := newStore(t, client)
		complete(t, s, rule, execute(t, s, rule, req))
		toV1(t, s, pk, unchanged)
		if n, err := s.PurgeTenant(ctx, "acme"); err != nil || n != 1 {
			t.Errorf("PurgeTenant = %d, %v; want 1", n, err)
		}
	})
}
