package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/redis/go-redis/v9"
)

// server is a redis-server of the test's own, on a free loopback port,
// never the shared one: the test kills and restarts it.
type server struct {
	t    *testing.T
	bin  string
	args []string
	addr string
	cmd  *exec.Cmd
}

// startServer starts redis-server with extra arguments, or skips the test
// when there is none (fails it under IDEMPRINT_TEST_REQUIRE=1).
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := testenv.LookPath(t, "redis-server", "the Debian package redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{t: t, bin: bin, addr: "127.0.0.1:" + strconv.Itoa(port)}
	s.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no", "--logfile", ""}, extra...)
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	var out bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return
		}
	}
	s.stop()
	s.t.Fatalf("redis-server on %s did not answer within 5s:\n%s", s.addr, out.String())
}

// stop kills the server (SIGKILL: no shutdown, no goodbye to clients).
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// faultKinds are the errors a call may end with while the server dies:
// the server is gone, a write lost to a record that vanished with it, a
// caller's deadline.
var faultKinds = []error{store.ErrUnavailable, store.ErrConflict, store.ErrContention, context.DeadlineExceeded}

func kindOf(err error) (string, bool) {
	var se *store.Error
	if !errors.As(err, &se) {
		return fmt.Sprintf("%T", err), false
	}
	for _, k := range faultKinds {
		if se.Kind == k {
			return k.Error(), true
		}
	}
	return se.Kind.Error(), false
}

// A bounded load of Acquire and completions runs while the server is
// killed and restarted (empty: it keeps nothing). Every call succeeds or
// fails with a typed error, no record is half-written, and the same Store
// serves again once the server is back.
func TestFault(t *testing.T) {
	srv := startServer(t)
	client := redis.NewClient(&redis.Options{
		Addr: srv.addr, ContextTimeoutEnabled: true, PoolSize: 16,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
		MaxRetries: 2, DialerRetries: 2, DialerRetryTimeout: 20 * time.Millisecond,
	})
	t.Cleanup(func() { client.Close() })
	s, err := redisstore.New(client, redisstore.Options{Prefix: "fault:"})
	if err != nil {
		t.Fatal(err)
	}
	rule := testRule(t)
	const (
		workers   = 8
		perWorker = 300 // requests, each one or two Acquire calls and a write
		keys      = 40  // per worker: keys are reused, so records outlive restarts
		budget    = 30 * time.Second
	)
	var (
		mu        sync.Mutex
		kinds     = map[string]int{}
		calls     atomic.Int64
		okAfter   atomic.Int64 // successful calls after the restart
		restarted atomic.Bool
	)
	note := func(err error) {
		calls.Add(1)
		if err == nil {
			if restarted.Load() {
				okAfter.Add(1)
			}
			return
		}
		k, ok := kindOf(err)
		mu.Lock()
		kinds[k]++
		mu.Unlock()
		if !ok {
			t.Errorf("a call failed with %v (%s), not one of %v", err, k, faultKinds)
		}
	}
	start := time.Now()
	stopAt := start.Add(budget)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				if time.Now().After(stopAt) {
					return
				}
				req := testRequest(t, rule, "tenant-"+strconv.Itoa(w), "k"+strconv.Itoa(i%keys), i%3)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				c, err := store.Acquire(ctx, s, rule, req)
				note(err)
				if err == nil && (c.Decision.Action == policy.Execute || c.Decision.Action == policy.ExecuteAsNew) {
					done, err := rule.Complete(&c.Record, policy.Response{Status: 201, Body: bytes.Repeat([]byte{byte(i)}, 512)}, c.Now)
					if err != nil {
						t.Error(err)
					} else {
						note(s.Write(ctx, done, store.Guard{}))
					}
				}
				cancel()
			}
		}()
	}
	// Kill the server a quarter into the run and start it again.
	for calls.Load() < workers*perWorker/4 && time.Now().Before(stopAt) {
		time.Sleep(5 * time.Millisecond)
	}
	killedAt := calls.Load()
	srv.stop()
	time.Sleep(300 * time.Millisecond)
	srv.start()
	restarted.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d calls in %v (killed after %d, down about 300ms); errors by kind: %v; %d calls succeeded after the restart",
		calls.Load(), elapsed.Round(time.Millisecond), killedAt, kinds, okAfter.Load())
	if okAfter.Load() == 0 {
		t.Error("no call succeeded after the restart: the Store did not recover")
	}

	// Every record there decodes: nothing is half-written.
	ctx := context.Background()
	read := 0
	for w := range workers {
		for k := range keys {
			for amount := range 3 {
				pk, nk, _ := rule.StorageKeys(testRequest(t, rule, "tenant-"+strconv.Itoa(w), "k"+strconv.Itoa(k), amount))
				for _, sk := range []string{pk, nk} {
					rec, err := s.Read(ctx, sk)
					if err != nil {
						t.Errorf("Read after the run: %v", err)
					}
					if rec != nil {
						read++
					}
				}
			}
		}
	}
	iter := client.Scan(ctx, 0, "fault:*", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := client.Get(ctx, iter.Val()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if header, _, ok := strings.Cut(v, "\n"); !ok || len(strings.Split(header, " ")) != 6 {
			t.Errorf("key %q holds %q, not a value of the store", iter.Val(), v)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records read back after the run, all decoded", read)

	// The same Store serves a new request from start to end.
	c, err := store.Acquire(ctx, s, rule, testRequest(t, rule, "after", "k", 1))
	if err != nil || c.Decision.Action != policy.Execute {
		t.Fatalf("Acquire after the restart = %v, %v; want execute", c.Decision.Action, err)
	}
	done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, done, store.Guard{}); err != nil {
		t.Fatalf("Write after the restart: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after the restart: %v", err)
	}
}

// A server at maxmemory with noeviction refuses writes: ErrFull, with the
// OOM reply as the cause, and nothing half-written; reads still work.
func TestFull(t *testing.T) {
	srv := startServer(t, "--maxmemory", "3mb", "--maxmemory-policy", "noeviction")
	client := redis.NewClient(&redis.Options{Addr: srv.addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	s, err := redisstore.New(client, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rule := testRule(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 64<<10)
	var last policy.Record
	for i := range 200 {
		c, err := store.Acquire(ctx, s, rule, testRequest(t, rule, "acme", "k"+strconv.Itoa(i), 1))
		if err == nil {
			last = c.Record
			var done policy.Record
			done, err = rule.Complete(&c.Record, policy.Response{Status: 201, Body: body}, c.Now)
			if err != nil {
				t.Fatal(err)
			}
			if err = s.Write(ctx, done, store.Guard{}); err == nil {
				continue
			}
		}
		if !errors.Is(err, store.ErrFull) || !redis.HasErrorPrefix(err, "OOM") {
			t.Fatalf("after %d records: error %v, want ErrFull with the OOM reply", i, err)
		}
		t.Logf("ErrFull after %d records of 64 KiB: %v", i, err)
		if last.StorageKey != "" {
			if _, err := s.Read(ctx, last.StorageKey); err != nil {
				t.Errorf("Read at maxmemory: %v", err)
			}
		}
		return
	}
	t.Fatal("200 records of 64 KiB fit in 3 MB")
}
