package redisstore_test

import (
	"context"
	"errors"
	"net/http"
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

// The hash of a record holds g, s, l, e, r and n (a reservation's nonce,
// "" after the next write), and the key expires at the end of the
// record's life, rounded up to the millisecond.
func TestLayout(t *testing.T) {
	client := nodeClient(t)
	s := newStore(t, client)
	ctx := context.Background()
	rule := testRule(t)
	c := execute(t, s, rule, testRequest(t, rule, "acme", "k1", 1))
	check := func(stage string, rec *policy.Record, wantNonce bool) {
		t.Helper()
		k := s.Key(rec.StorageKey)
		got, err := client.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		micros := func(tm time.Time) string {
			if tm.IsZero() {
				return ""
			}
			return strconv.FormatInt(tm.UnixMicro(), 10)
		}
		want := map[string]string{
			"g": strconv.FormatUint(rec.Generation, 10),
			"s": strconv.Itoa(int(rec.State)),
			"l": micros(rec.LeaseExpiry),
			"e": micros(rec.ExpiresAt),
			"r": string(store.AppendPayload(nil, rec)),
		}
		if n := got["n"]; wantNonce && len(n) != 16 || !wantNonce && n != "" {
			t.Errorf("%s: nonce field %q, want a nonce %v", stage, n, wantNonce)
		}
		delete(got, "n")
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: hash fields mismatch (-want +got):\n%s", stage, d)
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

// Hash fields that do not parse make every operation on the key fail
// with ErrCorrupt, never a replay or an overwrite; Delete recovers.
func TestCorruptFields(t *testing.T) {
	client := nodeClient(t)
	ctx := context.Background()
	rule := testRule(t)
	for _, tc := range []struct {
		name   string
		damage func(k string) error
	}{
		{"Generation/NotDecimal", func(k string) error { return client.HSet(ctx, k, "g", "x1").Err() }},
		{"Generation/Zero", func(k string) error { return client.HSet(ctx, k, "g", "0").Err() }},
		{"Generation/LeadingZero", func(k string) error { return client.HSet(ctx, k, "g", "0123").Err() }},
		{"Generation/Beyond2^53", func(k string) error { return client.HSet(ctx, k, "g", "9007199254740993").Err() }},
		{"State/Unknown", func(k string) error { return client.HSet(ctx, k, "s", "3").Err() }},
		{"Lease/Exponent", func(k string) error { return client.HSet(ctx, k, "l", "1e15").Err() }},
		{"Expiry/Negative", func(k string) error { return client.HSet(ctx, k, "e", "-1").Err() }},
		{"Payload/Missing", func(k string) error { return client.HDel(ctx, k, "r").Err() }},
		{"WrongType", func(k string) error {
			return client.Set(ctx, k, "a string", time.Minute).Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, client)
			req := testRequest(t, rule, "acme", "k1", 1)
			c := execute(t, s, rule, req)
			done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
			if err != nil {
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
			isCorrupt("Write", s.Write(ctx, done, store.Guard{}))
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
