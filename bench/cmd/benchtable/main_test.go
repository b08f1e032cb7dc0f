package main

import (
	"bytes"
	"strings"
	"testing"
)

// benchstatCSV is what `benchstat -format csv` prints for one input file
// (abridged: benchstat also prints sec/op and B/op tables, which are skipped).
const benchstatCSV = `,raw.txt,
,sec/op,CI
Canonical/wide/idemprint-jcs-2,0.0004,3%
geomean,0.0004,

,raw.txt,
,B/s,CI
Canonical/wide/idemprint-jcs-2,1.2e+08,3%
Canonical/wide/idemprint-exact-2,1e+08,1%
Canonical/wide/gowebpki-jcs-2,3e+07,∞
Sum/order_large/idemprint-sum-2,1e+08,2%
Sum/order_large/sha256-raw-2,2e+09,1%
geomean,1e+08,

,raw.txt,
,allocs/op,CI
Canonical/wide/idemprint-jcs-2,0,∞
Canonical/wide/idemprint-exact-2,0,∞
Canonical/wide/gowebpki-jcs-2,17795,∞
Sum/order_large/idemprint-sum-2,0,∞
Sum/order_large/sha256-raw-2,0,∞
geomean,,
`

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "Text",
			want: `benchmark        impl             MB/s   ±  allocs/op  idemprint is × faster
Canonical/wide   idemprint-jcs     120  3%          0  exact 0.83×
                 idemprint-exact   100  1%          0  jcs 1.20×
                 gowebpki-jcs     30.0   -      17795  jcs 4.00×  exact 3.33×
Sum/order_large  idemprint-sum     100  2%          0
                 sha256-raw       2000  1%          0  sum 0.05×
`,
		},
		{
			name: "Markdown",
			args: []string{"-md"},
			want: `| benchmark | impl | MB/s | ± | allocs/op | idemprint is × faster |
|---|---|--:|--:|--:|---|
| Canonical/wide | idemprint-jcs | 120 | 3% | 0 | exact 0.83× |
|  | idemprint-exact | 100 | 1% | 0 | jcs 1.20× |
|  | gowebpki-jcs | 30.0 | - | 17795 | jcs 4.00×  exact 3.33× |
| Sum/order_large | idemprint-sum | 100 | 2% | 0 |  |
|  | sha256-raw | 2000 | 1% | 0 | sum 0.05× |
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, strings.NewReader(benchstatCSV), &stdout, &stderr); code != 0 {
				t.Fatalf("run(%q) = %d, stderr:\n%s", tt.args, code, stderr.String())
			}
			if got := stdout.String(); got != tt.want {
				t.Errorf("run(%q) output:\n%s\nwant:\n%s", tt.args, got, tt.want)
			}
		})
	}
}

func TestRunNoResults(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(",raw.txt,\n,sec/op,CI\n"), &stdout, &stderr); code != 1 {
		t.Errorf("run on a CSV without B/s = %d, want 1", code)
	}
}
