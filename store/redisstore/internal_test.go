package redisstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/redis/go-redis/v9"
)

// replyError is an error reply of a server, as go-redis reports one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestClassify(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	live := context.Background()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"Context/Canceled", canceled, io.EOF, context.Canceled},
		{"Context/Deadline", expired, &net.OpError{Op: "read", Err: errors.New("i/o timeout")}, context.DeadlineExceeded},
		{"Context/ClientTimeoutIsAFault", live, context.DeadlineExceeded, store.ErrUnavailable},
		{"Network/EOF", live, io.EOF, store.ErrUnavailable},
		{"Network/Refused", live, &net.OpError{Op: "dial", Err: errors.New("connection refused")}, store.ErrUnavailable},
		{"Client/Closed", live, redis.ErrClosed, store.ErrUnavailable},
		{"Client/PoolTimeout", live, redis.ErrPoolTimeout, store.ErrUnavailable},
		{"Reply/OOM", live, replyError("OOM command not allowed when used memory > 'maxmemory'."), store.ErrFull},
		{"Reply/Loading", live, replyError("LOADING Redis is loading the dataset in memory"), store.ErrUnavailable},
		{"Reply/ReadOnly", live, replyError("READONLY You can't write against a read only replica."), store.ErrUnavailable},
		{"Reply/WrongType", live, replyError("WRONGTYPE Operation against a key holding the wrong kind of value script: 36a6, on @user_script:1."), store.ErrCorrupt},
		{"Reply/ClusterDown", live, replyError("CLUSTERDOWN The cluster is down"), store.ErrUnavailable},
		{"Reply/ScriptError", live, replyError("ERR user_script:1: Script attempted to access nonexistent global variable"), store.ErrUnavailable},
		{"Reply/NoPermission", live, replyError("NOPERM this user has no permissions to run the 'evalsha' command"), store.ErrUnavailable},
		{"Nil", live, redis.Nil, store.ErrUnavailable},
	} {
		err := classify(tc.ctx, "write", "sk", tc.err)
		var se *store.Error
		if !errors.As(err, &se) || se.Op != "write" || se.StorageKey != "sk" {
			t.Errorf("%s: classify = %#v, want a *store.Error of op write and key sk", tc.name, err)
			continue
		}
		if se.Kind != tc.want {
			t.Errorf("%s: Kind = %v, want %v", tc.name, se.Kind, tc.want)
		}
		if tc.err != redis.Nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: %v does not wrap go-redis's error %v", tc.name, err, tc.err)
		}
	}
}

// The fields the scripts accept are exactly those Go accepts.
func TestFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		time bool // a valid time field
		gen  bool // a valid generation field
	}{
		{"", true, false},
		{"0", true, false},
		{"1", true, true},
		{"1796055276929540", true, true},
		{"9007199254740991", true, true},
		{"9007199254740992", false, true}, // 2^53: the last generation, no time
		{"9007199254740993", false, false},
		{"10000000000000000", false, false},
		{"01", false, false},
		{"-1", false, false},
		{"+1", false, false},
		{"1e6", false, false},
		{" 1", false, false},
		{"1.0", false, false},
		{"0x10", false, false},
	} {
		if _, ok := parseTime(tc.in); ok != tc.time {
			t.Errorf("parseTime(%q) ok = %v, want %v", tc.in, ok, tc.time)
		}
		if _, ok := generation(tc.in); ok != tc.gen {
			t.Errorf("generation(%q) ok = %v, want %v", tc.in, ok, tc.gen)
		}
	}
	for _, tc := range []struct {
		t    time.Time
		want string
		ok   bool
	}{
		{time.Time{}, "", true},
		{time.Unix(0, 0), "0", true},
		{time.Unix(1, 999), "1000000", true},
		{time.Date(2026, 11, 30, 0, 0, 0, 1500, time.FixedZone("x", 3600)), "1795993200000001", true},
		{time.Unix(0, -1), "", false},
		{time.UnixMicro(1<<53 - 1), "9007199254740991", true},
		{time.UnixMicro(1 << 53), "", false},
	} {
		b, ok := appendTime([]byte("x"), tc.t)
		got, _ := strings.CutPrefix(string(b), "x")
		if got != tc.want || ok != tc.ok {
			t.Errorf("appendTime(%v) = %q, %v; want %q, %v", tc.t, got, ok, tc.want, tc.ok)
		}
		if ok {
			back, _ := parseTime(got)
			if !back.Equal(tc.t.Truncate(time.Microsecond)) {
				t.Errorf("parseTime(appendTime(%v)) = %v", tc.t, back)
			}
		}
	}
}

// Replies of another shape than the scripts return are ErrUnavailable,
// fields that do not parse ErrCorrupt; a value and a v1 hash's fields are
// both records.
func TestRecordReply(t *testing.T) {
	payload := string(store.AppendPayload(nil, &policy.Record{Tenant: "acme", Status: 201}))
	for _, tc := range []struct {
		name  string
		reply any
		want  error
	}{
		{"None", int64(0), nil},
		{"Value/Record", "2 7 2  1796055276929540 \n" + payload, nil},
		{"Value/Reservation", "2 7 1 1796055276929540 1796055276929540 0123456789abcdef0123456789abcdef\n" + payload, nil},
		{"Value/BadHeader", "2 7 2 1796055276929540\n" + payload, store.ErrCorrupt},
		{"Value/BadGeneration", "2 9007199254740993 2  1 \n" + payload, store.ErrCorrupt},
		{"Value/BadPayload", "2 7 2  1 \nnot a payload", store.ErrCorrupt},
		{"V1/Record", []any{"7", "2", "", "1796055276929540", payload, ""}, nil},
		{"V1/Reservation", []any{"7", "1", "1796055276929540", "1796055276929540", payload, "nonce"}, nil},
		{"V1/StateNotString", []any{"1", int64(1), "", "", "p", nil}, store.ErrCorrupt},
		{"V1/BadGeneration", []any{"0", "1", "", "", "p", nil}, store.ErrCorrupt},
		{"V1/BadPayload", []any{"1", "1", "", "", "not a payload", nil}, store.ErrCorrupt},
		{"Other/Integer", int64(5), store.ErrUnavailable},
		{"Other/ShortTable", []any{"1", "1", "", "", payload}, store.ErrUnavailable},
	} {
		rec, err := record("read", "sk", tc.reply)
		if tc.want == nil {
			if err != nil || (rec == nil) != (tc.reply == int64(0)) {
				t.Errorf("%s: record = %v, %v", tc.name, rec, err)
			}
			continue
		}
		if rec != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: record = %v, %v; want %v", tc.name, rec, err, tc.want)
		}
	}
}

// valueHeaders are headers of values, valid or not, each followed by the
// same payload: the scripts and Go must read each alike.
var valueHeaders = []string{
	"2 1 0   \n",
	"2 7 1 1796055276929540 1796055276929540 0123456789abcdef0123456789abcdef\n",
	"2 7 2  1796055276929540 \n",
	"2 9007199254740992 2 0 9007199254740991 \n",
	"2 7 1 5 6 ABCdef09\n",
	"2 7 2  1 \n\n2 7 2  1 \n", // a payload that looks like a header
	"",
	"2",
	"2 ",
	"1 7 2  1 \n",
	" 2 7 2  1 \n",
	"2  7 2  1 \n",
	"2 7 2  1\n",
	"2 7 2  1 ",
	"2 7 2  1 \r\n",
	"2 0 2  1 \n",
	"2 07 2  1 \n",
	"2 9007199254740993 2  1 \n",
	"2 10000000000000000 2  1 \n",
	"2 7 3  1 \n",
	"2 7 12  1 \n",
	"2 7  1 1 \n",
	"2 7 2 01 1 \n",
	"2 7 2  9007199254740992 \n",
	"2 7 2  10000000000000000 \n",
	"2 7 2 +1 1 \n",
	"2 7 2  -1 \n",
	"2 7 2  1e6 \n",
	"2 7 2  1.0 \n",
	"2 7 1 1 1 xyz\n",
	"2 7 1 1 1 0x12\n",
	"2 \xff 2  1 \n",
}

// TestSplitValue pins the header of a value.
func TestSplitValue(t *testing.T) {
	type parts struct{ G, S, L, E, N, Payload string }
	for _, tc := range []struct {
		in   string
		want *parts // nil: does not split
	}{
		{"2 1 0   \n", &parts{"1", "0", "", "", "", ""}},
		{"2 7 1 5 6 ABCdef09\npayload", &parts{"7", "1", "5", "6", "ABCdef09", "payload"}},
		{"2 7 2  1 \n\n2 7 2  1 \n", &parts{"7", "2", "", "1", "", "\n2 7 2  1 \n"}},
		{"2 7 2  1\n", nil},
		{"2 07 2  1 \n", nil},
		{"2 7 3  1 \n", nil},
		{"2 7 2  1 \r\n", nil},
		{"2 7 1 1 1 xyz\n", nil},
		{"", nil},
	} {
		var got *parts
		if g, s, l, e, n, p, ok := splitValue(tc.in); ok {
			got = &parts{g, s, l, e, n, p}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("splitValue(%q) mismatch (-want +got):\n%s", tc.in, d)
		}
	}
}

// loadScript replies to a value as the prelude's load reads it: -1 for
// corrupt, or {g, s, l, e} with -1 for a zero time.
var loadScript = redis.NewScript(prelude + `
local c, g, s, l, e = load(KEYS[1])
if c == false then return -1 end
return {g, s, string.format('%d', l), string.format('%d', e)}
`)

// goLoad replies as loadScript would by Go's reading of a value.
func goLoad(v string) any {
	g, s, l, e, _, _, ok := splitValue(v)
	var rec policy.Record
	if !ok || !parseFields(&rec, g, s, l, e) {
		return int64(-1)
	}
	us := func(t time.Time) string {
		if t.IsZero() {
			return "-1"
		}
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	return []any{g, s, us(rec.LeaseExpiry), us(rec.ExpiresAt)}
}

// agreement returns a function that fails t unless the scripts read a
// value as Go does; the key it uses is deleted when tb ends.
func agreement(tb testing.TB) func(t *testing.T, v string) {
	opts, err := redis.ParseURL(testenv.Lookup(tb, testenv.Redis, "redis://127.0.0.1:6379/0"))
	if err != nil {
		tb.Fatal(err)
	}
	client := redis.NewClient(opts)
	var b [8]byte
	rand.Read(b[:])
	key := "idemprint-test:" + hex.EncodeToString(b[:]) + ":value"
	ctx := context.Background()
	tb.Cleanup(func() {
		client.Del(ctx, key)
		client.Close()
	})
	payload := string(store.AppendPayload(nil, &policy.Record{Tenant: "acme"}))
	return func(t *testing.T, v string) {
		t.Helper()
		v += payload
		if err := client.Set(ctx, key, v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		got, err := loadScript.Run(ctx, client, []string{key}).Result()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(goLoad(v), got); d != "" {
			t.Errorf("value %q: the script's reading differs from Go's (-go +script):\n%s", v, d)
		}
	}
}

// The values the scripts accept are exactly those Go accepts, with the
// same fields.
func TestScriptsReadValues(t *testing.T) {
	check := agreement(t)
	for _, h := range valueHeaders {
		check(t, h)
	}
}

// FuzzValue checks that the scripts and Go read every value alike.
func FuzzValue(f *testing.F) {
	for _, h := range valueHeaders {
		f.Add(h)
	}
	check := agreement(f)
	f.Fuzz(check)
}

// appendPayload and appendValue allocate once: payloadBound and
// headerBound bound what they write.
func TestAppendOnce(t *testing.T) {
	fp, err := fingerprint.Compile(fingerprint.Spec{Intent: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fp.Sum(fingerprint.Request{Method: "POST", Path: "/p", Body: []byte(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	var many policy.Header
	for i := range 300 {
		many = append(many, policy.HeaderField{Name: strconv.Itoa(i), Value: ""}, policy.HeaderField{Name: strconv.Itoa(i), Value: "v"})
	}
	for _, rec := range []*policy.Record{
		{},
		{Tenant: "t", Key: "k", Route: "POST /p", Fingerprint: sum, SpecDigest: strings.Repeat("d", 64), Intent: []byte{}, Status: 999},
		{Fingerprint: sum, Header: many, Body: make([]byte, 1<<20)},
	} {
		if p, want := appendPayload(rec), store.AppendPayload(nil, rec); !bytes.Equal(p, want) || len(want) > payloadBound(rec) {
			t.Errorf("appendPayload: %d bytes, equal %v, bound %d", len(want), bytes.Equal(p, want), payloadBound(rec))
		}
		// The longest header: every number at its largest.
		rec.Generation, rec.State = 1<<53, policy.StateCompleted
		rec.LeaseExpiry, rec.ExpiresAt = time.UnixMicro(1<<53-1), time.UnixMicro(1<<53-1)
		if v, ok := appendValue(rec); !ok || len(v) > headerBound+payloadBound(rec) {
			t.Errorf("appendValue: %d bytes, %v, bound %d", len(v), ok, headerBound+payloadBound(rec))
		}
	}
}
