package canonical_test

import (
	"errors"
	"fmt"

	"github.com/idemprint/idemprint/canonical"
)

func ExampleTransform() {
	out, err := canonical.Transform([]byte(`{ "currency": "EUR", "amount": 10.50, "note": "caf\u00e9 \/ bar" }`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"amount":10.5,"currency":"EUR","note":"café / bar"}
}

func ExampleAppend() {
	buf := make([]byte, 0, 64)
	for _, body := range []string{`{"b":2,"a":1}`, `{"a":1.0,"b":2e0}`} {
		var err error
		buf, err = canonical.Append(buf[:0], []byte(body)) // reuses buf: no allocation
		if err != nil {
			panic(err)
		}
		fmt.Println(string(buf))
	}
	// Output:
	// {"a":1,"b":2}
	// {"a":1,"b":2}
}

func ExampleOptions_exact() {
	in := []byte(`[9007199254740993, 1.0, 1e400, 0.10]`)
	jcs, err := canonical.Options{Numbers: canonical.JCS}.Transform([]byte(`[9007199254740993, 1.0, 0.10]`))
	fmt.Println(string(jcs), err)
	exact, err := canonical.Options{Numbers: canonical.Exact}.Transform(in)
	fmt.Println(string(exact), err)
	// Output:
	// [9007199254740992,1,0.1] <nil>
	// [9007199254740993,1,1e+400,0.1] <nil>
}

func ExampleError() {
	_, err := canonical.Transform([]byte(`{"amount":10,"amount":10000}`))
	var ce *canonical.Error
	if errors.As(err, &ce) {
		fmt.Println(ce.Offset, ce.Pointer, errors.Is(err, canonical.ErrDuplicateName))
	}
	fmt.Println(err)
	// Output:
	// 13 /amount true
	// canonical: byte 13 at /amount: duplicate member name "amount"
}

func ExampleAppendString() {
	b, err := canonical.AppendString(nil, "tab\there \"quoted\" é")
	fmt.Println(string(b), err)
	// Output: "tab\there \"quoted\" é" <nil>
}

func ExampleOptions_Validate() {
	body := []byte(`{"items":[{"sku":"A-1","qty":2}],"note":"caf\u00e9","items":[]}`)
	fmt.Println(canonical.Options{}.Validate(body))
	fmt.Println(canonical.Options{}.Validate([]byte(`{"b":[1, 2.50],"a":"x"}`)))
	// Output:
	// canonical: byte 52 at /items: duplicate member name "items"
	// <nil>
}
