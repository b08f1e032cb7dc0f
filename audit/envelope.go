package audit

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/internal/httpsyntax"
	"github.com/tidwall/gjson"
)

// entry is one request of a log, as the envelope or the HAR mapping gives
// it.
type entry struct {
	t      time.Time
	method string
	url    *url.URL // Path, RawPath and RawQuery of the request target
	host   string   // the Host header, which net/http keeps out of Header
	header http.Header
	tenant string // "" when the log names none
	body   []byte // nil: no body
	status int    // 0: not in the log
	dur    time.Duration
}

// Envelope members, one bit each, to find duplicates and missing ones.
const (
	memberTime = 1 << iota
	memberMethod
	memberPath
	memberHeaders
	memberTenant
	memberBody
	memberStatus
	memberDuration
)

var envelopeMembers = map[string]int{
	"time": memberTime, "method": memberMethod, "path": memberPath, "headers": memberHeaders,
	"tenant": memberTenant, "body": memberBody, "status": memberStatus, "duration": memberDuration,
}

// parseLine reads one JSON Lines request. line and raw hold the same bytes;
// the body, when it is a JSON value, is a sub-slice of raw.
//
// The line is checked to be strict JSON, in two parts so that the body,
// most of the line, is read once less: the body by the fingerprint (a
// strict canonical parse) when it is fingerprinted, else by gjson.Valid;
// the rest, with the body replaced by 0, by gjson.Valid. checkBody reports
// whether the body is an object or an array left to the caller to check.
//
// A line is read in one pass by scanLine; one that it does not take, for
// an error or a form it leaves to gjson (an escape in a string, a value of
// the wrong type), is read again by parseLineGJSON, which tells what is
// wrong with it.
func parseLine(line string, raw []byte) (e entry, checkBody bool, err error) {
	if e, checkBody, ok := scanLine(line, raw); ok {
		return e, checkBody, nil
	}
	return parseLineGJSON(line, raw)
}

// parseLineGJSON is parseLine by gjson: it reads any line, and is the
// reference of what scanLine returns for the lines it takes.
func parseLineGJSON(line string, raw []byte) (e entry, checkBody bool, err error) {
	doc := gjson.Parse(line)
	if !doc.IsObject() {
		if gjson.Valid(line) {
			return e, false, malformed("not a JSON object")
		}
		return e, false, malformed("not a JSON text")
	}
	seen := 0
	var body gjson.Result
	doc.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "body" && v.Type == gjson.JSON {
			body = v
		}
		bit, ok := envelopeMembers[k.Str]
		switch {
		case !ok:
			err = malformed("unknown member " + quoteShort(k.Str))
		case seen&bit != 0:
			err = malformed("duplicate member " + strconv.Quote(k.Str))
		default:
			seen |= bit
			err = e.setMember(bit, v, raw)
		}
		return err == nil
	})
	if err == nil && !validSkeleton(line, body) {
		err = malformed("not a JSON text")
	}
	if err != nil {
		return e, false, err
	}
	for _, m := range []struct {
		bit  int
		name string
	}{{memberTime, "time"}, {memberMethod, "method"}, {memberPath, "path"}} {
		if seen&m.bit == 0 {
			return e, false, malformed("missing member " + strconv.Quote(m.name))
		}
	}
	if e.header == nil {
		e.header = http.Header{}
	}
	return e, body.Exists(), nil
}

// validSkeleton reports whether line is one JSON text once its body, an
// object or array that the caller checks, is replaced by 0.
func validSkeleton(line string, body gjson.Result) bool {
	if !body.Exists() {
		return gjson.Valid(line)
	}
	var buf [512]byte
	end := body.Index + len(body.Raw)
	sk := append(append(append(buf[:0], line[:body.Index]...), '0'), line[end:]...)
	return gjson.ValidBytes(sk)
}

// setMember sets the envelope member bit from v.
func (e *entry) setMember(bit int, v gjson.Result, raw []byte) error {
	str := func(name string) (string, error) {
		if v.Type != gjson.String {
			return "", malformed(strconv.Quote(name) + " is not a string")
		}
		return v.Str, nil
	}
	var err error
	switch bit {
	case memberTime:
		var s string
		if s, err = str("time"); err == nil {
			e.t, err = parseTime(s)
		}
	case memberMethod:
		var s string
		if s, err = str("method"); err == nil {
			err = e.setMethod(s)
		}
	case memberPath:
		var s string
		if s, err = str("path"); err == nil {
			err = e.setTarget(s)
		}
	case memberHeaders:
		err = e.setHeaders(v)
	case memberTenant:
		e.tenant, err = str("tenant")
		if err == nil && e.tenant == "" {
			err = malformed(`"tenant" is empty`)
		}
	case memberBody:
		if v.Type == gjson.String {
			e.body = []byte(v.Str)
		} else {
			e.body = raw[v.Index : v.Index+len(v.Raw)]
		}
	case memberStatus:
		e.status, err = parseStatus(v)
	case memberDuration:
		var s string
		if s, err = str("duration"); err == nil {
			e.dur, err = time.ParseDuration(s)
			if err != nil || e.dur < 0 {
				err = malformed(`"duration" is not a non-negative Go duration, such as "350ms"`)
			}
		}
	}
	return err
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, malformed(`"time" is not an RFC 3339 time, such as "2025-01-06T09:00:00.250Z"`)
	}
	return t, nil
}

func (e *entry) setMethod(s string) error {
	if !httpsyntax.IsToken(s) {
		return malformed("method " + quoteShort(s) + " is not an HTTP token")
	}
	e.method = s
	return nil
}

// setTarget sets the request target from an origin-form path with its
// query, "/v1/payments?x=1".
func (e *entry) setTarget(s string) error {
	if !strings.HasPrefix(s, "/") {
		return malformed(`"path" must start with "/": the path and query of the request line`)
	}
	u, err := url.ParseRequestURI(s)
	if err != nil {
		return malformed(`"path" is not a request target: ` + quoteShort(s))
	}
	e.url = u
	return nil
}

// setHeaders reads {"Name": "value" or ["value", ...]}. Names are added as
// net/http adds them, in canonical form, so that two spellings of one name
// are one header with several values; Host goes to e.host, as net/http
// moves it out of the header map.
func (e *entry) setHeaders(v gjson.Result) error {
	if !v.IsObject() {
		return malformed(`"headers" is not an object`)
	}
	e.header = http.Header{}
	var err error
	var seen []string
	v.ForEach(func(k, v gjson.Result) bool {
		if slices.Contains(seen, k.Str) {
			err = malformed("duplicate header member " + quoteShort(k.Str))
			return false
		}
		seen = append(seen, k.Str)
		switch {
		case v.Type == gjson.String:
			err = e.addHeader(k.Str, v.Str)
		case v.IsArray():
			v.ForEach(func(_, x gjson.Result) bool {
				if x.Type != gjson.String {
					err = malformed("header " + quoteShort(k.Str) + " has a value that is not a string")
				} else {
					err = e.addHeader(k.Str, x.Str)
				}
				return err == nil
			})
		default:
			err = malformed("header " + quoteShort(k.Str) + " is neither a string nor an array of strings")
		}
		return err == nil
	})
	return err
}

func (e *entry) addHeader(name, value string) error {
	if !httpsyntax.IsToken(name) {
		return malformed("header name " + quoteShort(name) + " is not an HTTP token")
	}
	if strings.EqualFold(name, "Host") {
		if e.host != "" {
			return malformed("more than one Host header")
		}
		e.host = value
		return nil
	}
	e.header.Add(name, value)
	return nil
}

func parseStatus(v gjson.Result) (int, error) {
	n, err := strconv.Atoi(v.Raw)
	if v.Type != gjson.Number || err != nil || n < 200 || n > 599 {
		return 0, malformed(`"status" is not a final status, an integer from 200 to 599`)
	}
	return n, nil
}

// harEntry is what the audit reads of a HAR 1.2 entry.
type harEntry struct {
	StartedDateTime string   `json:"startedDateTime"`
	Time            *float64 `json:"time"`
	Request         *struct {
		Method  string `json:"method"`
		URL     string `json:"url"`
		Headers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
		PostData *struct {
			Text     *string `json:"text"`
			Encoding string  `json:"encoding"`
		} `json:"postData"`
	} `json:"request"`
	Response *struct {
		Status int `json:"status"`
	} `json:"response"`
}

// parseHAREntry reads one HAR entry; see the package documentation for
// the mapping.
func parseHAREntry(raw []byte) (entry, error) {
	var e entry
	var h harEntry
	if err := json.Unmarshal(raw, &h); err != nil {
		return e, malformed("not a HAR entry: " + err.Error())
	}
	if h.Request == nil {
		return e, malformed(`no "request"`)
	}
	var err error
	if e.t, err = parseTime(h.StartedDateTime); err != nil {
		return e, malformed(`"startedDateTime" is not an RFC 3339 time`)
	}
	if err := e.setMethod(h.Request.Method); err != nil {
		return e, err
	}
	u, err := url.Parse(h.Request.URL)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return e, malformed(`"url" is not an absolute URL`)
	}
	e.host = u.Host
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	if err := e.setTarget(target); err != nil {
		return e, err
	}
	e.header = http.Header{}
	hostHeader := false
	for _, hd := range h.Request.Headers {
		name := hd.Name
		switch {
		case name == ":authority": // HTTP/2 and HTTP/3 pseudo-headers
			name = "Host"
		case strings.HasPrefix(name, ":"):
			continue
		}
		if strings.EqualFold(name, "Host") {
			if hostHeader {
				return e, malformed("more than one Host header")
			}
			hostHeader = true
			e.host = hd.Value
			continue
		}
		if err := e.addHeader(name, hd.Value); err != nil {
			return e, err
		}
	}
	if pd := h.Request.PostData; pd != nil && pd.Text != nil {
		switch pd.Encoding {
		case "":
			e.body = []byte(*pd.Text)
		case "base64":
			if e.body, err = base64.StdEncoding.DecodeString(*pd.Text); err != nil {
				return e, malformed(`"postData" is not valid base64`)
			}
		default:
			return e, malformed(`"postData" has an unknown encoding ` + quoteShort(pd.Encoding))
		}
	}
	if h.Response != nil && h.Response.Status >= 200 && h.Response.Status <= 599 {
		e.status = h.Response.Status
	}
	if h.Time != nil && *h.Time > 0 && *h.Time < float64(math.MaxInt64/int64(time.Millisecond)) {
		e.dur = time.Duration(*h.Time * float64(time.Millisecond))
	}
	return e, nil
}

// quoteShort quotes s, cut to 40 bytes: messages never echo much input.
func quoteShort(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "…"
	}
	return strconv.Quote(s)
}
