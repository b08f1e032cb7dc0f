package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/internal/jsonwire"
)

// version is the CLI's version; the fingerprint format has its own (v1).
const version = "0.1.0"

const usage = `usage: idemprint <command> [arguments]

commands:
  canon        write the canonical form of a JSON text (RFC 8785, or exact numbers)
  fingerprint  compute the fingerprint of a request body
  lint         check a policy file
  explain      tell what a policy does with a second request that reuses a key
  audit        replay a log of requests (JSON Lines or HAR) through a policy and report
  serve        run an idempotency proxy in front of any HTTP API
  version      print the version
  help         print this help

Run "idemprint <command> -h" for a command's flags.

exit status, the same for every command:
  0  success                                              canon, fingerprint, version, help
     the policy is clean                                  lint
     the policies are clean, no route orphans records     lint --previous
     SECOND is a retry of FIRST                           explain
     stopped by SIGTERM or SIGINT once requests finished  serve
     nothing to report                                    audit
  1  a body that is not strict JSON                       canon, fingerprint, explain
     a request a server rejects: a missing required       fingerprint, explain
       value, a declared query parameter that does not
       parse, a declared header that is not UTF-8
     a policy with problems                               lint, fingerprint --policy, explain
     a deploy from OLD to NEW orphans stored records      lint --previous
     no rule matches --route (the request passes through) fingerprint --policy
     SECOND is not a retry (a conflict, or no rule)       explain
     requests under way cut by --shutdown-timeout         serve
     findings: rejections or suggested ignore entries     audit
  2  an unknown command or flag, a missing or extra       every command
       argument, a bad flag value
     a file that cannot be read                           every command that reads one
     output that cannot be written, an internal error     canon, fingerprint, explain
     a policy with problems, a store that does not        serve
       answer, an address that cannot be bound
     a policy with problems, a log that is not JSON       audit
       Lines or HAR, a malformed line under --strict
`

// Exit statuses shared by every command; usage and the README list which
// case gives which.
const (
	exitOK    = 0 // success; for explain, SECOND is a retry
	exitFail  = 1 // a finding or rejected input
	exitUsage = 2 // a usage or environment error
)

// run is the whole CLI; main only supplies the process's streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "canon":
		return runCanon(rest, stdin, stdout, stderr)
	case "fingerprint":
		return runFingerprint(rest, stdin, stdout, stderr)
	case "lint":
		return runLint(rest, stdout, stderr)
	case "explain":
		return runExplain(rest, stdout, stderr)
	case "audit":
		return runAudit(rest, stdin, stdout, stderr)
	case "serve":
		return runServe(rest, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "idemprint %s (fingerprint format v1)\n", version)
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "idemprint: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// newFlags returns a flag set that reports usage errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: idemprint %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and returns the exit status to stop with, if any.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, true
		}
		return exitUsage, true
	}
	return 0, false
}

// readInput reads the named file, or stdin when name is "" or "-". It
// returns the name to use in messages.
func readInput(name string, stdin io.Reader) ([]byte, string, error) {
	if name == "" || name == "-" {
		b, err := readAll(stdin)
		return b, "<stdin>", err
	}
	b, err := os.ReadFile(name)
	return b, name, err
}

// readAll reads r to the end. A regular file (stdin redirected from one)
// is read into a buffer of its size, as os.ReadFile does: io.ReadAll would
// grow one step by step, holding up to twice the input at once.
func readAll(r io.Reader) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			b := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
			_, err := b.ReadFrom(f)
			return b.Bytes(), err
		}
	}
	return io.ReadAll(r)
}

// formatError describes err for a human: with a *canonical.Error found in
// its chain, as name:line:col (byte N) at /pointer: problem.
func formatError(name string, src []byte, err error) string {
	var ce *canonical.Error
	if !errors.As(err, &ce) {
		return "idemprint: " + name + ": " + err.Error()
	}
	line, col := canonical.LineColumn(src, ce.Offset)
	s := "idemprint: " + name + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) +
		" (byte " + strconv.FormatInt(ce.Offset, 10) + ")"
	if ce.Pointer != "" {
		s += " at " + jsonwire.ShortPointer(ce.Pointer)
	}
	return s + ": " + ce.Err.Error()
}

// numberModeFlag is a flag.Value for --numbers.
type numberModeFlag struct{ mode *canonical.NumberMode }

func (f numberModeFlag) String() string {
	if f.mode == nil {
		return ""
	}
	return f.mode.String()
}

func (f numberModeFlag) Set(s string) error { return f.mode.UnmarshalText([]byte(s)) }

func runCanon(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts canonical.Options
	fs := newFlags("canon", "[--numbers jcs|exact] [--max-depth N] [FILE]", stderr)
	fs.Var(numberModeFlag{&opts.Numbers}, "numbers", "number mode: jcs (RFC 8785) or exact (never rounds)")
	fs.IntVar(&opts.MaxDepth, "max-depth", canonical.DefaultMaxDepth, "maximum nesting depth")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	if opts.MaxDepth <= 0 {
		fmt.Fprintln(stderr, "idemprint: --max-depth must be positive")
		return exitUsage
	}
	src, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	out, err := opts.Transform(src)
	if err != nil {
		fmt.Fprintln(stderr, formatError(name, src, err))
		return exitFail
	}
	return writeOutput(stdout, stderr, out)
}

// writeOutput writes out, a command's whole output, to stdout. Output that
// cannot be written is an environment error.
func writeOutput(stdout, stderr io.Writer, out []byte) int {
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	return exitOK
}
