package policy_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/policy"
)

func TestHeaderOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   http.Header
		want policy.Header
	}{
		{"Nil", nil, nil},
		{"NoValues", http.Header{"A": nil, "B": {}}, nil},
		{"Sorted", http.Header{
			"X-B":          {"2", "1"}, // values keep their order
			"Content-Type": {"application/json"},
			"X-A":          {""}, // an empty value is a value
			"x-a":          {"lower"},
		}, policy.Header{
			{"Content-Type", "application/json"}, {"X-A", ""}, {"X-B", "2"}, {"X-B", "1"}, {"x-a", "lower"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := policy.HeaderOf(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HeaderOf mismatch (-want +got):\n%s", diff)
			}
			if len(tc.want) > 0 {
				if diff := cmp.Diff(tc.in, got.HTTP(), cmp.Transformer("dropEmpty", dropEmpty)); diff != "" {
					t.Errorf("HTTP does not give the header back (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// dropEmpty drops the names without values, which a Header does not keep.
func dropEmpty(h http.Header) map[string][]string {
	out := map[string][]string{}
	for k, v := range h {
		if len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

func TestHeaderHTTP(t *testing.T) {
	h := policy.Header{{"B", "1"}, {"A", "x"}, {"B", "2"}, {"C", "y"}} // built by hand, out of order
	got := h.HTTP()
	want := http.Header{"A": {"x"}, "B": {"1", "2"}, "C": {"y"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("HTTP mismatch (-want +got):\n%s", diff)
	}
	// The values of one name must not share room with the next name's.
	got["A"] = append(got["A"], "appended")
	if got["B"][0] != "1" || got["C"][0] != "y" {
		t.Errorf("appending to one name's values changed another's: %v", got)
	}
	got["B"][0] = "changed"
	if h[0].Value != "1" {
		t.Errorf("HTTP shares values with the Header")
	}
	if got := (policy.Header{}).HTTP(); got != nil {
		t.Errorf("HTTP of an empty Header = %v, want nil", got)
	}
}

func TestHeaderSorted(t *testing.T) {
	sorted := policy.Header{{"A", "1"}, {"B", "2"}}
	if got := sorted.Sorted(); &got[0] != &sorted[0] {
		t.Errorf("Sorted copied a sorted header")
	}
	h := policy.Header{{"B", "2"}, {"A", "1"}, {"B", "1"}}
	want := policy.Header{{"A", "1"}, {"B", "2"}, {"B", "1"}}
	if diff := cmp.Diff(want, h.Sorted()); diff != "" {
		t.Errorf("Sorted mismatch (-want +got):\n%s", diff)
	}
	if h[0].Name != "B" {
		t.Errorf("Sorted changed its receiver: %v", h)
	}
}

func TestHeaderValues(t *testing.T) {
	h := policy.Header{{"Link", "</a>"}, {"Link", "</b>"}, {"X-Id", "7"}}
	for _, tc := range []struct {
		name  string
		want  []string
		first string
	}{
		{"link", []string{"</a>", "</b>"}, "</a>"},
		{"X-ID", []string{"7"}, "7"},
		{"Missing", nil, ""},
	} {
		if diff := cmp.Diff(tc.want, h.Values(tc.name)); diff != "" {
			t.Errorf("Values(%q) mismatch (-want +got):\n%s", tc.name, diff)
		}
		if got := h.Get(tc.name); got != tc.first {
			t.Errorf("Get(%q) = %q, want %q", tc.name, got, tc.first)
		}
	}
}

func ExampleHeaderOf() {
	h := policy.HeaderOf(http.Header{
		"Location":     {"/v1/payments/pay_1"},
		"Link":         {"</a>; rel=a", "</b>; rel=b"},
		"Content-Type": {"application/json"},
	})
	for _, f := range h {
		fmt.Printf("%s: %s\n", f.Name, f.Value)
	}
	fmt.Println(h.Get("location"), len(h.HTTP()))
	// Output:
	// Content-Type: application/json
	// Link: </a>; rel=a
	// Link: </b>; rel=b
	// Location: /v1/payments/pay_1
	// /v1/payments/pay_1 3
}

// Runs yields the fields of each name together in a sorted header, and
// each run of one name separately in one built out of order; a loop that
// breaks gets no more.
func TestHeaderRuns(t *testing.T) {
	type run struct {
		Name   string
		Values []string
	}
	for _, tc := range []struct {
		name  string
		h     policy.Header
		limit int // runs taken before breaking; 0: all
		want  []run
	}{
		{"Empty", nil, 0, nil},
		{"One", policy.Header{{"A", "1"}}, 0, []run{{"A", []string{"1"}}}},
		{"Sorted", policy.Header{{"A", "1"}, {"B", "2"}, {"B", "3"}, {"C", "4"}}, 0,
			[]run{{"A", []string{"1"}}, {"B", []string{"2", "3"}}, {"C", []string{"4"}}}},
		{"OutOfOrder", policy.Header{{"B", "1"}, {"A", "2"}, {"B", "3"}, {"B", "4"}}, 0,
			[]run{{"B", []string{"1"}}, {"A", []string{"2"}}, {"B", []string{"3", "4"}}}},
		{"Break", policy.Header{{"A", "1"}, {"B", "2"}, {"B", "3"}, {"C", "4"}}, 2,
			[]run{{"A", []string{"1"}}, {"B", []string{"2", "3"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []run
			for name, fields := range tc.h.Runs() {
				r := run{Name: name}
				for _, f := range fields {
					if f.Name != name {
						t.Errorf("run %q holds a field of %q", name, f.Name)
					}
					r.Values = append(r.Values, f.Value)
				}
				if got = append(got, r); len(got) == tc.limit {
					break
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Runs (-want +got):\n%s", diff)
			}
		})
	}
}

func ExampleHeader_Runs() {
	h := policy.HeaderOf(http.Header{
		"Link":         {"</a>; rel=a", "</b>; rel=b"},
		"Content-Type": {"application/json"},
	})
	for name, fields := range h.Runs() {
		fmt.Println(name, len(fields))
	}
	// Output:
	// Content-Type 1
	// Link 2
}
