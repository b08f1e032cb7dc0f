package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/policy"
)

// runLint checks a policy file and prints its problems, one a line, to
// stdout: the first policy.MaxFindings, then "… and N more" when there are
// more. With --previous OLD, it checks OLD too and then prints, for every
// route, what deploying POLICY in place of OLD does to the records OLD's
// rules stored (policy.Compare). It exits 0 when the policies are clean
// (and no route orphans records), 1 when one has problems or a route
// orphans records, and 2 on a usage error, an unreadable file or policies
// too complex to compare.
func runLint(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lint", "[--previous OLD] POLICY", stderr)
	previous := fs.String("previous", "", "the policy deployed now: tell what deploying POLICY in its place does to its records, route by route")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	next, code := lintFile(fs.Arg(0), stdout, stderr)
	if *previous == "" {
		return code
	}
	prev, prevCode := lintFile(*previous, stdout, stderr)
	if code != exitOK || prevCode != exitOK {
		return max(code, prevCode)
	}
	return lintDeploy(*previous, fs.Arg(0), prev, next, stdout, stderr)
}

// lintFile parses the policy file name and prints its problems.
func lintFile(name string, stdout, stderr io.Writer) (*policy.Policy, int) {
	src, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return nil, exitUsage
	}
	pol, err := policy.Parse(src)
	problems := policyProblems(pol, err)
	loc := locator{src: src}
	for _, p := range problems {
		line, col := loc.lineCol(p.Offset)
		fmt.Fprintln(stdout, formatProblemAt(name, line, col, p))
	}
	n := len(problems)
	var pe *policy.ParseError
	if errors.As(err, &pe) && pe.Omitted() > 0 {
		fmt.Fprintf(stdout, "… and %d more\n", pe.Omitted())
		n += pe.Omitted()
	}
	if n > 0 {
		fmt.Fprintf(stderr, "idemprint: %s: %d %s\n", name, n, plural(n, "problem", "problems"))
		return nil, exitFail
	}
	return pol, exitOK
}

// lintDeploy prints, one line a route, what deploying next (from the file
// nextName) in place of prev does to prev's records:
//
//	POST /v1/payments (new.json /rules/0): storage keys change, for the records of POST /v1/payments: scope.route changes ...
//
// It exits 1 when a route orphans records.
func lintDeploy(prevName, nextName string, prev, next *policy.Policy, stdout, stderr io.Writer) int {
	changes, err := policy.Compare(prev, next)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	orphans := 0
	for _, c := range changes {
		file := nextName
		if c.Ungoverned {
			file = prevName
		}
		line := c.Route + " (" + file + " " + c.Pointer + "): " + c.Impact.String()
		if c.From != "" {
			line += ", for the records of " + c.From
		}
		if len(c.Reasons) > 0 {
			line += ": " + strings.Join(c.Reasons, "; ")
		}
		fmt.Fprintln(stdout, line)
		if c.Impact == policy.KeysChange {
			orphans++
		}
	}
	if orphans > 0 {
		fmt.Fprintf(stderr, "idemprint: deploying %s in place of %s orphans the records of %d %s: their retries would execute again\n",
			nextName, prevName, orphans, plural(orphans, "route", "routes"))
		return exitFail
	}
	return exitOK
}

// policyProblems returns the problems of an error of policy.Parse.
func policyProblems(_ *policy.Policy, err error) []policy.Finding {
	if err == nil {
		return nil
	}
	var pe *policy.ParseError
	if errors.As(err, &pe) {
		return pe.Findings
	}
	return []policy.Finding{{Err: err}}
}

// formatProblem describes a policy problem as formatError describes a JSON
// error: name:line:col (byte N) at /pointer: problem.
func formatProblem(name string, src []byte, p policy.Finding) string {
	line, col := canonical.LineColumn(src, p.Offset)
	return formatProblemAt(name, line, col, p)
}

// formatProblemAt is formatProblem with the line and column of the
// problem's offset already found.
func formatProblemAt(name string, line, col int, p policy.Finding) string {
	s := name + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + " (byte " + strconv.FormatInt(p.Offset, 10) + ")"
	if p.Pointer != "" {
		s += " at " + p.Pointer
	}
	return s + ": " + p.Err.Error()
}

// locator finds lines and columns as lineCol does, but reads the source
// only once for offsets that come in ascending order, as a policy's
// problems do: lineCol for each problem of a 1 MB file read it again from
// the start every time.
type locator struct {
	src       []byte
	off       int // how far it has read, always after a whole character
	line, col int // of off; zero before the first call
}

// lineCol returns the 1-based line and column (in characters, an invalid
// byte counting as one) of the byte offset off.
func (l *locator) lineCol(off int64) (line, col int) {
	end := int(min(max(off, 0), int64(len(l.src))))
	if l.line == 0 || end < l.off {
		l.off, l.line, l.col = 0, 1, 1
	}
	for l.off < end {
		if l.src[l.off] == '\n' {
			l.off, l.line, l.col = l.off+1, l.line+1, 1
			continue
		}
		_, size := utf8.DecodeRune(l.src[l.off:])
		if l.off+size > end { // off is inside this character
			break
		}
		l.off, l.col = l.off+size, l.col+1
	}
	return l.line, l.col + utf8.RuneCount(l.src[l.off:end])
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
