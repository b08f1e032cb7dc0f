package jsonwire

import (
	"bytes"
	"fmt"
	"testing"
)

// recorder is a Selector that follows every container down to depth
// follow, asks for every value at depth emit, and records what it got.
type recorder struct {
	follow, emit int
	depth        int
	values       [][]byte
	enters       int
}

func (r *recorder) Enter(_ []byte, _ int, first byte) (Action, []string) {
	r.enters++
	r.depth++
	switch {
	case r.depth-1 == r.emit:
		return Emit, nil
	case r.depth-1 < r.follow && (first == '{' || first == '['):
		return Follow, nil
	}
	return Pass, nil
}

func (r *recorder) Value(canon []byte) { r.values = append(r.values, bytes.Clone(canon)) }
func (r *recorder) Leave()             { r.depth-- }

var selectInputs = []string{
	`{"b":[1, 2.50,{"z":true,"y":null}],"a":"caf\u00e9"}`,
	`[{"b":1,"a":2},[],{},"x\ty",1e400]`,
	`"top"`,
	`{"a":{"a":{"a":1,"a":2}}}`,
	`{"a":[1,]}`,
	`{"a":"\ud800"}`,
	`[[[[[[1]]]]]]`,
	`{"a":1} x`,
	`{"a":[1,2`,
	"[\"\xff\"]",
}

// TestSelectMatchesValidate checks that Select returns what Validate
// returns, whatever the selector asks for, and that what it writes out is
// what Append writes.
func TestSelectMatchesValidate(t *testing.T) {
	o := Options{Numbers: Exact, MaxDepth: 4}
	for _, in := range selectInputs {
		want := Validate(o, []byte(in))
		for _, sel := range []struct{ follow, emit int }{{0, -1}, {0, 0}, {1, 1}, {9, 2}, {9, 9}} {
			t.Run(fmt.Sprintf("%s/follow=%d,emit=%d", in, sel.follow, sel.emit), func(t *testing.T) {
				r := &recorder{follow: sel.follow, emit: sel.emit}
				got := Select(o, []byte(in), r)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("Select = %v, Validate = %v", got, want)
				}
				if got != nil {
					return
				}
				if r.depth != 0 {
					t.Errorf("%d values entered and not left", r.depth)
				}
				if sel.emit == 0 {
					canon, _ := Append(o, nil, []byte(in))
					if len(r.values) != 1 || !bytes.Equal(r.values[0], canon) {
						t.Errorf("Value got %q, want %q", r.values, canon)
					}
				}
				for _, v := range r.values {
					if again, err := Append(o, nil, v); err != nil || !bytes.Equal(again, v) {
						t.Errorf("value %q is not canonical", v)
					}
				}
			})
		}
	}
}
