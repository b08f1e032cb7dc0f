package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/policy"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

const auditSynopsis = `--policy POLICY [--json] [--tenant-header NAME] [--strict]
       [--reorder-window D] [--reorder-requests N] [--workers N] LOG...`

// runAudit replays logs of requests (JSON Lines or HAR, possibly gzipped;
// "-" for stdin) through a policy and reports what it would have done. It
// exits 0 when there is nothing to report, 1 when there are findings
// (rejections, suggested changes, malformed requests) and 2 on a usage
// error or an input it cannot read.
func runAudit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts audit.Options
	fs := newFlags("audit", auditSynopsis, stderr)
	policyName := fs.String("policy", "", "policy file (required)")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	fs.StringVar(&opts.TenantHeader, "tenant-header", "", "request header holding the tenant (default: the envelope's tenant, else \""+audit.DefaultTenant+"\")")
	fs.BoolVar(&opts.Strict, "strict", false, "stop at the first malformed or late request")
	fs.DurationVar(&opts.ReorderWindow, "reorder-window", audit.DefaultReorderWindow, "how far out of time order a request may be")
	fs.IntVar(&opts.ReorderRequests, "reorder-requests", audit.DefaultReorderRequests, "how many requests may wait to be put in time order")
	fs.IntVar(&opts.Workers, "workers", 0, "goroutines parsing and fingerprinting (default: the number of CPUs)")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if *policyName == "" || fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	src, err := os.ReadFile(*policyName)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	pol, err := policy.Parse(src)
	if err != nil {
		for _, p := range policyProblems(pol, err) {
			fmt.Fprintln(stderr, "idemprint: "+formatProblem(*policyName, src, p))
		}
		return exitUsage
	}

	var inputs []audit.Input
	for _, name := range fs.Args() {
		if name == "-" {
			inputs = append(inputs, audit.Input{Name: "<stdin>", R: stdin, Size: -1})
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "idemprint:", err)
			return exitUsage
		}
		defer f.Close()
		size := int64(-1)
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		inputs = append(inputs, audit.Input{Name: name, R: f, Size: size})
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newProgress(stderr)
	if bar != nil {
		opts.Progress = bar.update
	}
	rep, err := audit.Run(ctx, pol, inputs, opts)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	if rep.Findings() {
		return exitFail
	}
	return exitOK
}

// progress shows how far an audit is on a terminal: bytes read of the
// total, requests a second, and the time left.
type progress struct {
	out   *os.File
	bar   *progressbar.ProgressBar
	start time.Time
}

// newProgress returns a progress bar on stderr when it is a terminal, or
// nil: nothing is written to a file or a pipe.
func newProgress(stderr io.Writer) *progress {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{out: f, start: time.Now()}
}

func (p *progress) update(pr audit.Progress) {
	if p.bar == nil {
		p.bar = progressbar.NewOptions64(pr.Total,
			progressbar.OptionSetWriter(p.out),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionFullWidth(),
		)
	}
	rate := float64(pr.Requests) / max(time.Since(p.start).Seconds(), 1e-3)
	p.bar.Describe(strconv.FormatInt(pr.Requests, 10) + " requests, " + strconv.FormatFloat(rate, 'f', 0, 64) + "/s")
	_ = p.bar.Set64(pr.Read)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
