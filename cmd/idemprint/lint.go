package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/idemprint/idemprint/policy"
)

// runLint checks a policy file and prints every problem, one a line, to
// stdout. It exits 0 when the policy is clean, 1 when it has problems and 2
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
	problems := policyProblems(policy.Parse(src))
	for _, p := range problems {
		fmt.Fprintln(stdout, formatProblem(name, src, p))
	}
	if n := len(problems); n > 0 {
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
	s := name + ":" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + " (byte " + strconv.FormatInt(p.Offset, 10) + ")"
	if p.Pointer != "" {
		s += " at " + p.Pointer
	}
	return s + ": " + p.Err.Error()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
