package idemclient

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchBody is a payment of the size APIs send: some hundreds of bytes.
var benchBody = `{"orderId":"ord_8842","amountCents":1000,"currency":"EUR","customer":"cus_9f8e7d6c5b4a","description":"` +
	strings.Repeat("x", 160) + `","metadata":{"cart":"c_1234567890","channel":"web"}}`

// stub answers every request with a 201 without a network: what the
// transport adds, alone.
type stub struct{}

func (stub) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 201, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// BenchmarkTransport is the cost a successful first attempt pays for the
// transport: against a bare client on loopback (without a key, and with a
// key the caller mints and sets itself), and against a stub that isolates
// it; beside it, the cost of minting a key and copying the body.
func BenchmarkTransport(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"pay_1"}`)
	}))
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 4}
	defer base.CloseIdleConnections()
	wrapped, err := New(base, Options{})
	if err != nil {
		b.Fatal(err)
	}
	stubbed, err := New(stub{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	str := func() io.Reader { return strings.NewReader(benchBody) }
	stream := func() io.Reader { return io.MultiReader(strings.NewReader(benchBody)) } // no GetBody
	b.Run("Loopback/Bare", func(b *testing.B) { send(b, base, srv.URL, str, false) })
	b.Run("Loopback/BareWithKey", func(b *testing.B) { send(b, base, srv.URL, str, true) })
	b.Run("Loopback/Transport", func(b *testing.B) { send(b, wrapped, srv.URL, str, false) })
	b.Run("Loopback/TransportStream", func(b *testing.B) { send(b, wrapped, srv.URL, stream, false) })
	b.Run("Stub/Bare", func(b *testing.B) { send(b, stub{}, "http://stub/", str, false) })
	b.Run("Stub/Transport", func(b *testing.B) { send(b, stubbed, "http://stub/", str, false) })
	b.Run("Stub/TransportStream", func(b *testing.B) { send(b, stubbed, "http://stub/", stream, false) })
	b.Run("MintAndCopy", func(b *testing.B) {
		b.SetBytes(int64(len(benchBody)))
		b.ReportAllocs()
		for b.Loop() {
			k, err := newUUID()
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, len(benchBody))
			if _, err := io.ReadFull(stream(), buf); err != nil {
				b.Fatal(err)
			}
			if len(k) == 0 || !bytes.Equal(buf[:1], []byte("{")) {
				b.Fatal("no key")
			}
		}
	})
}

// send sends POST requests of a body through rt; with key, each with a
// key of its own, minted as the transport mints them.
func send(b *testing.B, rt http.RoundTripper, url string, body func() io.Reader, key bool) {
	client := &http.Client{Transport: rt}
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("POST", url, body())
		req.ContentLength = int64(len(benchBody))
		if key {
			k, err := newUUID()
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set(DefaultHeader, k)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			b.Fatal(resp.Status)
		}
	}
}
