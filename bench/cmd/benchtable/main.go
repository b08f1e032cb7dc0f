// Command benchtable prints one table from benchstat's CSV output for the
// benchmarks of the bench module: per benchmark and corpus case, the median
// MB/s of each implementation, its allocs/op, and how many times faster
// each idemprint implementation is than it.
//
// Usage:
//
//	go tool benchstat -format csv raw.txt | go run ./cmd/benchtable
//	go run ./cmd/benchtable [-md] benchstat.csv
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	md := fs.Bool("md", false, "print a Markdown table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	in := stdin
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: benchtable [-md] [benchstat.csv]")
		return 2
	}
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "benchtable:", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	rows, err := parse(in)
	if err != nil {
		fmt.Fprintln(stderr, "benchtable:", err)
		return 1
	}
	if len(rows) == 0 {
		fmt.Fprintln(stderr, "benchtable: no benchmark results with B/s in the input")
		return 1
	}
	write(stdout, rows, *md)
	return 0
}

// A row is one implementation on one case: benchstat's medians.
type row struct {
	group  string // "Canonical/order_large"
	impl   string // "gowebpki-jcs"
	bps    float64
	ci     string // benchstat's confidence interval of B/s, such as "2%"
	allocs string
}

// parse reads benchstat's CSV: for each unit a header line ",unit,CI" and
// then "name,value,CI" lines, closing with a geomean line.
func parse(r io.Reader) ([]*row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var (
		unit  string
		rows  []*row
		byKey = map[string]*row{}
	)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 2 {
			continue
		}
		if rec[0] == "" {
			if len(rec) >= 3 && rec[2] == "CI" {
				unit = rec[1]
			}
			continue
		}
		if rec[0] == "geomean" || unit != "B/s" && unit != "allocs/op" {
			continue
		}
		group, impl, ok := split(rec[0])
		if !ok {
			continue
		}
		key := group + "/" + impl
		x := byKey[key]
		if x == nil {
			x = &row{group: group, impl: impl}
			byKey[key] = x
			rows = append(rows, x)
		}
		switch unit {
		case "B/s":
			v, err := strconv.ParseFloat(rec[1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: B/s %q: %v", rec[0], rec[1], err)
			}
			x.bps = v
			if len(rec) > 2 {
				x.ci = rec[2]
			}
		case "allocs/op":
			x.allocs = rec[1]
			if v, err := strconv.ParseFloat(rec[1], 64); err == nil {
				x.allocs = strconv.FormatFloat(math.Round(v), 'f', -1, 64) // 14329374, not 1.4329374e+07
			}
		}
	}
	kept := rows[:0]
	for _, x := range rows {
		if x.bps > 0 {
			kept = append(kept, x)
		}
	}
	return kept, nil
}

// split turns "Canonical/order_large/gowebpki-jcs-2" into the group
// "Canonical/order_large" and the implementation "gowebpki-jcs", dropping the
// GOMAXPROCS suffix.
func split(name string) (group, impl string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	group, impl = name[:i], name[i+1:]
	if j := strings.LastIndexByte(impl, '-'); j >= 0 {
		if _, err := strconv.Atoi(impl[j+1:]); err == nil {
			impl = impl[:j]
		}
	}
	return group, impl, true
}

func write(w io.Writer, rows []*row, md bool) {
	header := []string{"benchmark", "impl", "MB/s", "±", "allocs/op", "idemprint is × faster"}
	var lines [][]string
	for i, x := range rows {
		group := x.group
		if i > 0 && rows[i-1].group == x.group {
			group = ""
		}
		ci := x.ci
		if ci == "∞" || md && ci == "" {
			ci = "-" // fewer than 6 rounds: no interval
		}
		lines = append(lines, []string{group, x.impl, mbps(x.bps), ci, x.allocs, ratios(rows, x)})
	}
	if md {
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|---|---|--:|--:|--:|---|")
		for _, l := range lines {
			fmt.Fprintln(w, "| "+strings.Join(l, " | ")+" |")
		}
		return
	}
	lines = append([][]string{header}, lines...)
	width := make([]int, len(header))
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		for i, c := range l {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if rightAligned[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString("  ")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// rightAligned marks the numeric columns of the table.
var rightAligned = []bool{false, false, true, true, true, false}

// ratios says how many times the throughput of x each idemprint
// implementation of x's group has: "jcs 4.2× exact 3.9×".
func ratios(rows []*row, x *row) string {
	var parts []string
	for _, y := range rows {
		name, ok := strings.CutPrefix(y.impl, "idemprint-")
		if !ok || y.group != x.group || y == x {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f×", name, y.bps/x.bps))
	}
	return strings.Join(parts, "  ")
}

func mbps(bps float64) string {
	v := bps / 1e6
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
