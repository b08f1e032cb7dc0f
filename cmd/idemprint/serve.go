package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/idemprint/idemprint/internal/sidecar"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

const serveSynopsis = `--policy FILE --upstream URL [--listen ADDR] [--admin ADDR]
       [--store memory | redis://… | rediss://… | postgres://…] [--redis-cluster ADDR,…]
       [--tenant-header NAME | --single-tenant] [flags]`

const serveHelp = `
Runs a reverse proxy to URL that enforces the idempotency policy in FILE:
a retry is replayed from the store, a reuse of a key with another request
is rejected as the policy declares, and concurrent duplicates execute once,
across every instance that shares the store.

The policy is checked at start (problems are printed as "idemprint lint"
prints them, and serve exits 2), and so is the store (exit 2 when it does
not answer). With postgres://, the table idemprint_records and its
functions are created when missing, ended records are swept every minute,
and the pool has 32 connections unless the URL sets pool_max_conns, all
opened at start and kept open unless it sets pool_min_conns (a
connection opened on demand makes a burst wait, and a completion that
waits past the lease lets a duplicate execute).

SIGHUP re-reads the policy and swaps it in only when it is valid; SIGTERM
or SIGINT stops accepting connections, lets the requests under way finish
and complete their records (at most --shutdown-timeout), and exits 0 (1
when requests had to be cut).

An upstream that cannot be reached is a 502 problem and frees the key; one
that fails after the request was sent (silent past --upstream-timeout, a
reset) is a 504 problem and the key stays reserved until the rule's lease
lapses: the upstream may have executed it.

The admin listener (--admin) serves /healthz, /readyz (the store answers)
and /metrics (Prometheus).

flags:
`

// serveConfig is what the flags of serve say.
type serveConfig struct {
	policyFile      string
	upstream        string
	listen          string
	admin           string
	store           string
	redisCluster    string
	tenantHeader    string
	singleTenant    bool
	upstreamTimeout time.Duration
	shutdownTimeout time.Duration
	storeTimeout    time.Duration
	maxRequestBody  int64
	maxResponseBody int64
	logFormat       string
	logLevel        slog.Level
}

// singleTenantName is the tenant of every request under --single-tenant.
const singleTenantName = "default"

// runServe is the serve command with the process's signals.
func runServe(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return serve(ctx, args, stderr, hup)
}

// serve runs the sidecar until ctx ends, reloading the policy on every
// value from hup.
func serve(ctx context.Context, args []string, stderr io.Writer, hup <-chan os.Signal) int {
	cfg, code, stop := parseServe(args, stderr)
	if stop {
		return code
	}
	log := newLogger(stderr, cfg)

	src, err := os.ReadFile(cfg.policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	pol, err := policy.Parse(src)
	if problems := policyProblems(pol, err); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, formatProblem(cfg.policyFile, src, p))
		}
		n := len(problems)
		fmt.Fprintf(stderr, "idemprint: %s: %d %s; not serving\n", cfg.policyFile, n, plural(n, "problem", "problems"))
		return exitUsage
	}
	upstream, _ := url.Parse(cfg.upstream) // checked by parseServe

	st, closeStore, err := openStore(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "idemprint: store %s: %v\n", storeName(cfg), err)
		return exitUsage
	}
	defer closeStore()

	single := ""
	if cfg.singleTenant {
		single = singleTenantName
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "idemprint_policy_reloads_total",
		Help: "Policy reloads on SIGHUP, by result: applied, rejected (problems found) or unreadable.",
	}, []string{"result"})
	reg.MustRegister(reloads)
	sc, err := sidecar.New(sidecar.Config{
		Upstream:        upstream,
		Policy:          pol,
		Store:           st,
		TenantHeader:    cfg.tenantHeader,
		SingleTenant:    single,
		Proxy:           sidecar.ProxyOptions{Timeout: cfg.upstreamTimeout},
		MaxRequestBody:  cfg.maxRequestBody,
		MaxResponseBody: cfg.maxResponseBody,
		Logger:          log,
		Registry:        reg,
	})
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	errorLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	srv := &http.Server{Handler: sc, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: errorLog}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()

	var draining atomic.Bool
	var adminSrv *http.Server
	adminAddr := ""
	if cfg.admin != "" {
		aln, err := net.Listen("tcp", cfg.admin)
		if err != nil {
			srv.Close()
			fmt.Fprintln(stderr, "idemprint:", err)
			return exitUsage
		}
		adminAddr = aln.Addr().String()
		ready := func(ctx context.Context) error {
			if draining.Load() {
				return errors.New("shutting down")
			}
			return ping(ctx, st)
		}
		adminSrv = &http.Server{Handler: sidecar.Admin(ready, reg), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}
		go func() { served <- adminSrv.Serve(aln) }()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "serving",
		slog.String("listen", ln.Addr().String()), slog.String("admin", adminAddr),
		slog.String("upstream", upstream.Redacted()), slog.String("store", storeName(cfg)),
		slog.String("policy", cfg.policyFile), slog.Int("rules", len(pol.Rules())))

wait:
	for {
		select {
		case <-hup:
			reloadPolicy(ctx, log, cfg.policyFile, sc, reloads)
		case err := <-served:
			log.LogAttrs(ctx, slog.LevelError, "server failed", slog.String("error", err.Error()))
			srv.Close()
			if adminSrv != nil {
				adminSrv.Close()
			}
			return exitUsage
		case <-ctx.Done():
			break wait
		}
	}

	draining.Store(true)
	log.LogAttrs(context.Background(), slog.LevelInfo, "shutting down: letting the requests under way finish",
		slog.Int64("executing", sc.Stats().Executing), slog.Duration("timeout", cfg.shutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	code = exitOK
	if err := srv.Shutdown(sctx); err != nil {
		log.LogAttrs(context.Background(), slog.LevelError, "shutdown timed out: cutting the requests under way; their keys stay reserved until their leases lapse",
			slog.Int64("executing", sc.Stats().Executing), slog.String("error", err.Error()))
		srv.Close()
		code = exitFail
	}
	if adminSrv != nil {
		adminSrv.Close()
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "stopped")
	return code
}

// parseServe parses and checks serve's flags.
func parseServe(args []string, stderr io.Writer) (cfg serveConfig, code int, stop bool) {
	fs := newFlags("serve", serveSynopsis, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: idemprint serve %s\n%s", serveSynopsis, serveHelp)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.policyFile, "policy", "", "the policy `FILE` (required)")
	fs.StringVar(&cfg.upstream, "upstream", "", "the upstream's base `URL`, http or https (required)")
	fs.StringVar(&cfg.listen, "listen", ":8080", "`ADDR` the proxy listens on")
	fs.StringVar(&cfg.admin, "admin", "", "`ADDR` of /healthz, /readyz and /metrics (none when empty)")
	fs.StringVar(&cfg.store, "store", "memory", "the idempotency store: memory (one instance only), a redis:// or rediss:// URL, or a postgres:// URL (creates its table when missing)")
	fs.StringVar(&cfg.redisCluster, "redis-cluster", "", "`ADDR,…` of Redis Cluster nodes, instead of --store")
	fs.StringVar(&cfg.tenantHeader, "tenant-header", "", "the header `NAME` that carries a request's tenant; a request without it is answered 400")
	fs.BoolVar(&cfg.singleTenant, "single-tenant", false, "every request belongs to one tenant (instead of --tenant-header)")
	fs.DurationVar(&cfg.upstreamTimeout, "upstream-timeout", time.Minute, "the longest the upstream may stay silent during an exchange, to the end of its response (0: no bound); past it the outcome is unknown (504)")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long requests under way may take to finish on SIGTERM")
	fs.DurationVar(&cfg.storeTimeout, "store-timeout", 5*time.Second, "how long the store may take to answer at start")
	fs.Int64Var(&cfg.maxRequestBody, "max-request-body", 1<<20, "the largest request body, in `bytes` (413 beyond)")
	fs.Int64Var(&cfg.maxResponseBody, "max-response-body", 1<<20, "the largest response kept for replay, in `bytes` (sent, not kept, beyond)")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log format: text or json")
	fs.TextVar(&cfg.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	if code, stop := parseFlags(fs, args); stop {
		return cfg, code, true
	}
	bad := func(msg string) (serveConfig, int, bool) {
		fmt.Fprintln(stderr, "idemprint: serve:", msg)
		return cfg, exitUsage, true
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument " + fs.Arg(0))
	case cfg.policyFile == "":
		return bad("--policy is required")
	case cfg.upstream == "":
		return bad("--upstream is required")
	case (cfg.tenantHeader == "") == !cfg.singleTenant:
		return bad("set exactly one of --tenant-header and --single-tenant")
	case cfg.upstreamTimeout < 0 || cfg.shutdownTimeout < 0 || cfg.storeTimeout <= 0:
		return bad("--upstream-timeout and --shutdown-timeout must not be negative, --store-timeout must be positive")
	case cfg.maxRequestBody <= 0 || cfg.maxResponseBody <= 0:
		return bad("--max-request-body and --max-response-body must be positive")
	case cfg.logFormat != "text" && cfg.logFormat != "json":
		return bad("--log-format must be text or json")
	case cfg.redisCluster != "" && cfg.store != "memory":
		return bad("--redis-cluster and --store are exclusive")
	}
	if u, err := url.Parse(cfg.upstream); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return bad("--upstream must be an http:// or https:// URL with a host")
	}
	return cfg, 0, false
}

func newLogger(w io.Writer, cfg serveConfig) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the store the flags name and checks that it answers.
func openStore(ctx context.Context, cfg serveConfig, log *slog.Logger) (store.Store, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.storeTimeout)
	defer cancel()
	var cluster []string
	if cfg.redisCluster != "" {
		cluster = strings.Split(cfg.redisCluster, ",")
	}
	st, closeStore, err := sidecar.Open(ctx, cfg.store, cluster, log)
	if err != nil {
		return nil, nil, err
	}
	if err := ping(ctx, st); err != nil {
		closeStore()
		return nil, nil, err
	}
	return st, closeStore, nil
}

// ping asks the store whether it answers, when it can tell.
func ping(ctx context.Context, st store.Store) error {
	if p, ok := st.(store.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// storeName names the store in messages, without a password.
func storeName(cfg serveConfig) string {
	if cfg.redisCluster != "" {
		return "redis-cluster " + cfg.redisCluster
	}
	return sidecar.Redact(cfg.store)
}

// reloadPolicy re-reads the policy file and swaps the policy in when it
// is valid; otherwise it logs the problems and keeps the policy in force.
func reloadPolicy(ctx context.Context, log *slog.Logger, name string, sc *sidecar.Sidecar, reloads *prometheus.CounterVec) {
	src, err := os.ReadFile(name)
	if err != nil {
		reloads.WithLabelValues("unreadable").Inc()
		log.LogAttrs(ctx, slog.LevelError, "policy reload failed; keeping the policy in force", slog.String("error", err.Error()))
		return
	}
	pol, err := policy.Parse(src)
	if problems := policyProblems(pol, err); len(problems) > 0 {
		reloads.WithLabelValues("rejected").Inc()
		lines := make([]string, len(problems))
		for i, p := range problems {
			lines[i] = formatProblem(name, src, p)
		}
		log.LogAttrs(ctx, slog.LevelError, "policy reload rejected; keeping the policy in force",
			slog.Int("problems", len(problems)), slog.Any("lint", lines))
		return
	}
	sc.SetPolicy(pol)
	reloads.WithLabelValues("applied").Inc()
	log.LogAttrs(ctx, slog.LevelInfo, "policy reloaded", slog.String("policy", name), slog.Int("rules", len(pol.Rules())))
}
