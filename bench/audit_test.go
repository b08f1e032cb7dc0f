package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/bench/genlog"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/tidwall/gjson"
)

var (
	auditLog = flag.String("audit.log", "", "JSON Lines log for BenchmarkAudit (default: genlog's, of -audit.n requests)")
	auditN   = flag.Int("audit.n", 50_000, "requests genlog writes for BenchmarkAudit")
)

// auditCase is a log and what Sum needs to fingerprint the same bodies.
type auditCase struct {
	log      []byte
	pol      *policy.Policy
	reqs     []sumRequest
	bodySize int64
}

type sumRequest struct {
	f *fingerprint.Fingerprinter
	r fingerprint.Request
}

func loadAuditCase(tb testing.TB) *auditCase {
	tb.Helper()
	c := &auditCase{}
	var err error
	if *auditLog != "" {
		if c.log, err = os.ReadFile(*auditLog); err != nil {
			tb.Fatal(err)
		}
	} else {
		var buf bytes.Buffer
		if err := genlog.Write(&buf, genlog.Options{Requests: *auditN}); err != nil {
			tb.Fatal(err)
		}
		c.log = buf.Bytes()
	}
	if c.pol, err = policy.Parse([]byte(genlog.Policy)); err != nil {
		tb.Fatal(err)
	}
	// The bodies of the requests with a key that a rule governs: what
	// the audit fingerprints.
	// Bodies are sub-slices of the log and headers are shared between
	// equal header sets, so that the fixture adds little for the garbage
	// collector to mark while the audit runs.
	headers := map[string]http.Header{}
	for line := range bytes.Lines(c.log) {
		env := gjson.ParseBytes(line)
		method, path := env.Get("method").Str, env.Get("path").Str
		rule, ok := c.pol.Match(method, path)
		if !ok || !env.Get("headers.Idempotency-Key").Exists() {
			continue
		}
		b := env.Get("body")
		body := line[b.Index : b.Index+len(b.Raw)]
		h := http.Header{}
		env.Get("headers").ForEach(func(k, v gjson.Result) bool { h.Set(k.Str, v.Str); return true })
		h.Del("Idempotency-Key") // read by no spec, and unique to each request
		set := fmt.Sprint(h)
		if shared := headers[set]; shared != nil {
			h = shared
		} else {
			headers[set] = h
		}
		c.reqs = append(c.reqs, sumRequest{rule.Fingerprinter(), fingerprint.Request{Method: method, Path: path, Header: h, Body: body}})
		c.bodySize += int64(len(body))
	}
	return c
}

// BenchmarkAudit measures the audit of a log end to end (parsing,
// fingerprinting on every core, deciding in order, analysing) against
// fingerprint.Sum alone on one core over the same bodies. Both report
// bytes of bodies a second; benchstat or cmd/benchtable divide them.
func BenchmarkAudit(b *testing.B) {
	c := loadAuditCase(b)
	b.Run("impl=audit", func(b *testing.B) {
		b.SetBytes(c.bodySize)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			rep, err := audit.Run(context.Background(), c.pol, []audit.Input{{Name: "log", R: bytes.NewReader(c.log), Size: int64(len(c.log))}}, audit.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if rep.Malformed != 0 {
				b.Fatalf("%d malformed requests", rep.Malformed)
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MiB")
	})
	b.Run("impl=sum", func(b *testing.B) {
		b.SetBytes(c.bodySize)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			for _, r := range c.reqs {
				fp, err := r.f.Sum(r.r)
				if err != nil {
					b.Fatal(err)
				}
				fingerprintSink = fp
			}
		}
	})
}

// reportCPU reports the CPU time the process used per operation, user and
// system, from now until the returned function is called: on a machine
// shared with other work, wall time says little about the cost.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
