package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/idemprint/idemprint/policy"
)

// runLint checks a policy file and prints its problems, one a line, to
// stdout: the first policy.MaxProblems, then "… and N more" when there are
// more. It exits 0 when the policy is clean, 1 when it has problems and 2
// on a usage error or an unreadable file.
func runLint(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lint", "POLICY", stderr)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	src, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	_, err = policy.Parse(src)
	problems := policyProblems(nil, err)
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
		return exitFail
	}
	return exitOK
}

// policyProblems returns the problems of an error of policy.Parse.
func policyProblems(_ *policy.Policy, err error) []policy.Problem {
	if err == nil {
		return nil
	}
	var pe *policy.ParseError
	if errors.As(err, &pe) {
		return pe.Problems
	}
	return []policy.Problem{{Err: err}}
}

// formatProblem describes a policy problem as formatError describes a JSON
// error: name:line:col (byte N) at /pointer: problem.
func formatProblem(name string, src []byte, p policy.Problem) string {
	line, col := lineCol(src, p.Offset)
	return formatProblemAt(name, line, col, p)
}

// formatProblemAt is formatProblem with the line and column of the
// problem's offset already found.
func formatProblemAt(name string, line, col int, p policy.Problem) string {
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
