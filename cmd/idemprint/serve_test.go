package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idemprint/idemprint/internal/testenv"
)

// servePolicy governs POST /pay; servePolicyV2 also rejects a reuse of a
// key with 409 instead of 422, which tells which policy is in force.
const (
	servePolicy   = `{"defaults": {"methods": []}, "rules": [{"route": "POST /pay", "lease": "2s"}]}`
	servePolicyV2 = `{"defaults": {"methods": []}, "rules": [{"route": "POST /pay", "lease": "2s", "mismatch_status": 409}]}`
	badPolicy     = "{\"rules\": [{\"route\": \"POST /pay\",\n  \"lease\": \"soon\"}]}"
)

func TestServeUsage(t *testing.T) {
	pol := writeTemp(t, "policy.json", servePolicy)
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"NoPolicy", []string{"--upstream", "http://127.0.0.1:1", "--single-tenant"}, "--policy is required"},
		{"NoUpstream", []string{"--policy", pol, "--single-tenant"}, "--upstream is required"},
		{"NoTenant", []string{"--policy", pol, "--upstream", "http://127.0.0.1:1"}, "exactly one of --tenant-header and --single-tenant"},
		{"BothTenants", []string{"--policy", pol, "--upstream", "http://127.0.0.1:1", "--single-tenant", "--tenant-header", "X-Account"}, "exactly one of"},
		{"UpstreamNotHTTP", []string{"--policy", pol, "--upstream", "ftp://host", "--single-tenant"}, "--upstream must be an http:// or https:// URL"},
		{"UpstreamNoHost", []string{"--policy", pol, "--upstream", "/pay", "--single-tenant"}, "--upstream must be"},
		{"LogFormat", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "--log-format", "xml"}, "--log-format must be text or json"},
		{"ClusterAndStore", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "--store", "redis://h", "--redis-cluster", "a:1"}, "exclusive"},
		{"StoreScheme", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "--store", "mysql://h/db"}, "unknown store scheme mysql"},
		{"NegativeTimeout", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "--shutdown-timeout", "-1s"}, "must not be negative"},
		{"Argument", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "extra"}, "unexpected argument extra"},
		{"NoPolicyFile", []string{"--policy", pol + ".missing", "--upstream", "http://h", "--single-tenant"}, "no such file"},
		{"Listen", []string{"--policy", pol, "--upstream", "http://h", "--single-tenant", "--listen", "256.0.0.1:0"}, "256.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runCLI(append([]string{"serve"}, tt.args...), "")
			if got.Code != exitUsage || !strings.Contains(got.Stderr, tt.want) {
				t.Errorf("serve %q = %d %q, want status 2 saying %q", tt.args, got.Code, got.Stderr, tt.want)
			}
		})
	}
}

// An invalid policy is printed as lint prints it, and nothing is served.
func TestServeLintsPolicy(t *testing.T) {
	pol := writeTemp(t, "policy.json", badPolicy)
	got := runCLI([]string{"serve", "--policy", pol, "--upstream", "http://127.0.0.1:1", "--single-tenant", "--listen", "127.0.0.1:0"}, "")
	lint := runCLI([]string{"lint", pol}, "")
	if got.Code != exitUsage || lint.Stdout == "" || !strings.HasPrefix(got.Stderr, lint.Stdout) || !strings.Contains(got.Stderr, "1 problem; not serving") {
		t.Errorf("serve with an invalid policy = %d %q, want status 2 and lint's lines %q", got.Code, got.Stderr, lint.Stdout)
	}
}

func TestServeHelp(t *testing.T) {
	got := runCLI([]string{"serve", "-h"}, "")
	for _, want := range []string{"usage: idemprint serve --policy FILE --upstream URL", "created when missing", "SIGHUP", "-redis-cluster", "-shutdown-timeout"} {
		if got.Code != exitOK || !strings.Contains(got.Stderr, want) {
			t.Errorf("serve -h = %d, lacks %q:\n%s", got.Code, want, got.Stderr)
		}
	}
	if help := runCLI([]string{"help"}, ""); !strings.Contains(help.Stdout, "serve ") {
		t.Errorf("help lacks serve:\n%s", help.Stdout)
	}
}

// countingUpstream is an API that counts executions and may be slowed.
type countingUpstream struct {
	*httptest.Server
	execs atomic.Int64
	delay atomic.Int64 // nanoseconds each answer waits
}

func newCountingUpstream(t *testing.T) *countingUpstream {
	u := &countingUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := u.execs.Add(1)
		time.Sleep(time.Duration(u.delay.Load()))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"execution":%d}`, n)
	}))
	t.Cleanup(u.Close)
	return u
}

// logLines is the JSON log of a serve process, read as it is written.
type logLines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines []map[string]any
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadBytes('\n')
		if err != nil {
			l.buf.Write(line) // an incomplete line waits for the rest
			return len(p), nil
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			m = map[string]any{"msg": strings.TrimSpace(string(line))} // not JSON: kept as is
		}
		l.lines = append(l.lines, m)
	}
}

// find returns the first line with msg after skipping the first from,
// waiting up to 10 s for it.
func (l *logLines) find(t *testing.T, msg string, from int) (map[string]any, int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if l.lines[i]["msg"] == msg {
				m := l.lines[i]
				l.mu.Unlock()
				return m, i + 1
			}
		}
		l.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no log line %q within 10 s; log:\n%s", msg, l.String())
	return nil, 0
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, m := range l.lines {
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// post sends body to url with key and returns the status and body.
func post(t *testing.T, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServe runs serve in the test's process: it forwards, replays,
// rejects, logs, exports metrics, reloads a valid policy and keeps the
// old one when the new one is invalid, and stops when told.
func TestServe(t *testing.T) {
	up := newCountingUpstream(t)
	polFile := writeTemp(t, "policy.json", servePolicy)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal, 1)
	var logs logLines
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--policy", polFile, "--upstream", up.URL, "--single-tenant",
			"--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--log-format", "json"}, &logs, hup)
	}()
	serving, next := logs.find(t, "serving", 0)
	base, admin := "http://"+serving["listen"].(string), "http://"+serving["admin"].(string)

	if code, body := post(t, base+"/pay", "k1", `{"amount":1}`); code != 201 || body != `{"execution":1}` {
		t.Fatalf("first = %d %s", code, body)
	}
	if code, body := post(t, base+"/pay", "k1", `{"amount":1.0}`); code != 201 || body != `{"execution":1}` {
		t.Errorf("retry = %d %s, want the replay", code, body)
	}
	if code, _ := post(t, base+"/pay", "k1", `{"amount":2}`); code != 422 {
		t.Errorf("reuse = %d, want 422", code)
	}
	line, _ := logs.find(t, "request", next)
	if line["outcome"] != "stored" || line["tenant"] != singleTenantName || line["key_hash"] == "" || line["fingerprint"] == "" {
		t.Errorf("request log line = %v", line)
	}
	if code, body := get(t, admin+"/readyz"); code != 200 {
		t.Errorf("/readyz = %d %s", code, body)
	}
	if _, body := get(t, admin+"/metrics"); !strings.Contains(body, `idemprint_decisions_total{action="replay",outcome="replayed",reason="retry",route="POST /pay",rule="/rules/0"} 1`) ||
		!strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics lacks the replay or the Go collector:\n%s", body)
	}

	// An invalid policy is refused and the old one stays.
	os.WriteFile(polFile, []byte(badPolicy), 0o644)
	hup <- syscall.SIGHUP
	rejected, next := logs.find(t, "policy reload rejected; keeping the policy in force", next)
	if lint, _ := rejected["lint"].([]any); len(lint) != 1 || !strings.Contains(lint[0].(string), "/rules/0/lease") {
		t.Errorf("rejected reload logs %v, want the lint problem", rejected)
	}
	if code, _ := post(t, base+"/pay", "k1", `{"amount":2}`); code != 422 {
		t.Errorf("reuse after a rejected reload = %d, want 422 (the old policy)", code)
	}
	// A valid one is swapped in.
	os.WriteFile(polFile, []byte(servePolicyV2), 0o644)
	hup <- syscall.SIGHUP
	logs.find(t, "policy reloaded", next)
	if code, _ := post(t, base+"/pay", "k1", `{"amount":2}`); code != 409 {
		t.Errorf("reuse after a reload = %d, want 409 (the new policy)", code)
	}
	if _, body := get(t, admin+"/metrics"); !strings.Contains(body, `idemprint_policy_reloads_total{result="applied"} 1`) ||
		!strings.Contains(body, `idemprint_policy_reloads_total{result="rejected"} 1`) {
		t.Errorf("/metrics lacks the reloads")
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve exited %d, want 0; log:\n%s", code, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if n := up.execs.Load(); n != 1 {
		t.Errorf("upstream executed %d times, want 1", n)
	}
}

// buildServe builds the idemprint binary into a temporary directory.
func buildServe(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; not in -short")
	}
	bin := filepath.Join(t.TempDir(), "idemprint")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveProcess is a running idemprint serve.
type serveProcess struct {
	cmd  *exec.Cmd
	logs *logLines
	read chan struct{} // closed when its stderr is read to the end
}

// Signal sends the process sig.
func (p *serveProcess) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill kills the process (SIGKILL).
func (p *serveProcess) Kill() error { return p.cmd.Process.Kill() }

// Wait waits for the process to exit, its log read to the end.
func (p *serveProcess) Wait() error {
	<-p.read
	return p.cmd.Wait()
}

// startServe starts the binary with args and a JSON log, and returns the
// process and the addresses it listens on.
func startServe(t *testing.T, bin string, args ...string) (p *serveProcess, base, admin string) {
	t.Helper()
	p = &serveProcess{logs: &logLines{}, read: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // copy line by line, so that a line is never split
		defer close(p.read)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.logs.Write(append(sc.Bytes(), '\n'))
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.Kill()
			p.Wait()
		}
	})
	serving, _ := p.logs.find(t, "serving", 0)
	return p, "http://" + serving["listen"].(string), "http://" + serving["admin"].(string)
}

// TestServeSignals sends the built binary real signals: SIGHUP swaps a
// valid policy in; SIGTERM lets the request under way finish, with its
// record completed, then exits 0.
func TestServeSignals(t *testing.T) {
	bin := buildServe(t)
	up := newCountingUpstream(t)
	polFile := writeTemp(t, "policy.json", servePolicy)
	cmd, base, admin := startServe(t, bin, "--policy", polFile, "--upstream", up.URL, "--single-tenant")
	logs := cmd.logs

	os.WriteFile(polFile, []byte(servePolicyV2), 0o644)
	cmd.Signal(syscall.SIGHUP)
	_, next := logs.find(t, "policy reloaded", 0)
	post(t, base+"/pay", "k1", `{"amount":1}`)
	if code, _ := post(t, base+"/pay", "k1", `{"amount":2}`); code != 409 {
		t.Errorf("reuse after SIGHUP = %d, want 409 (the new policy)", code)
	}

	up.delay.Store(int64(700 * time.Millisecond))
	type result struct {
		code int
		body string
	}
	slow := make(chan result, 1)
	go func() {
		code, body := post(t, base+"/pay", "k2", `{"amount":3}`)
		slow <- result{code, body}
	}()
	for up.execs.Load() < 2 { // the slow request reached the upstream
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Signal(syscall.SIGTERM)
	_, draining := logs.find(t, "shutting down: letting the requests under way finish", next)
	if code, _ := get(t, admin+"/readyz"); code != 503 {
		t.Errorf("/readyz while draining = %d, want 503", code)
	}
	if r := <-slow; r.code != 201 || r.body != `{"execution":2}` {
		t.Errorf("the request under way at SIGTERM = %d %s, want its answer", r.code, r.body)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve exited with %v, want 0; log:\n%s", err, logs.String())
	}
	line, _ := logs.find(t, "request", draining)
	if line["outcome"] != "stored" || line["status"] != float64(201) {
		t.Errorf("the request under way was logged %v, want its record stored", line)
	}
	logs.find(t, "stopped", draining)
}

// A request that outlives --shutdown-timeout is cut, and serve exits 1.
func TestServeShutdownTimeout(t *testing.T) {
	bin := buildServe(t)
	up := newCountingUpstream(t)
	up.delay.Store(int64(time.Second))
	polFile := writeTemp(t, "policy.json", servePolicy)
	cmd, base, _ := startServe(t, bin, "--policy", polFile, "--upstream", up.URL, "--single-tenant", "--shutdown-timeout", "200ms")
	logs := cmd.logs
	go func() {
		req, _ := http.NewRequest("POST", base+"/pay", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", "k")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for up.execs.Load() < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFail {
		t.Errorf("serve exited with %v, want status 1; log:\n%s", err, logs.String())
	}
	logs.find(t, "shutdown timed out: cutting the requests under way; their keys stay reserved until their leases lapse", 0)
}

// A store that does not answer at start is a usage error, said plainly.
func TestServeStoreDown(t *testing.T) {
	pol := writeTemp(t, "policy.json", servePolicy)
	for _, store := range []string{"redis://127.0.0.1:1/0", "postgres://postgres@127.0.0.1:1/test?sslmode=disable"} {
		got := runCLI([]string{"serve", "--policy", pol, "--upstream", "http://127.0.0.1:1", "--single-tenant",
			"--listen", "127.0.0.1:0", "--store", store, "--store-timeout", "1s"}, "")
		if got.Code != exitUsage || !strings.Contains(got.Stderr, "idemprint: store "+store+": store: ") {
			t.Errorf("serve --store %s = %d %q, want status 2 naming the store", store, got.Code, got.Stderr)
		}
	}
}

// serve runs against a Redis Cluster given by its nodes.
func TestServeRedisCluster(t *testing.T) {
	nodes := testenv.Lookup(t, testenv.RedisCluster, "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
	up := newCountingUpstream(t)
	pol := writeTemp(t, "policy.json", servePolicy)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs logLines
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--policy", pol, "--upstream", up.URL, "--tenant-header", "X-Account",
			"--listen", "127.0.0.1:0", "--log-format", "json", "--redis-cluster", nodes}, &logs, nil)
	}()
	serving, _ := logs.find(t, "serving", 0)
	base := "http://" + serving["listen"].(string)
	tenant := fmt.Sprintf("cluster-%d", time.Now().UnixNano())
	for i, want := range []string{`{"execution":1}`, `{"execution":1}`} {
		req, _ := http.NewRequest("POST", base+"/pay", strings.NewReader(`{"amount":1}`))
		req.Header.Set("Idempotency-Key", "k")
		req.Header.Set("X-Account", tenant)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || string(b) != want {
			t.Errorf("request %d = %d %s, want 201 %s", i, resp.StatusCode, b, want)
		}
	}
	cancel()
	if code := <-done; code != exitOK || up.execs.Load() != 1 {
		t.Errorf("serve = %d after %d executions, want 0 after 1", code, up.execs.Load())
	}
}
