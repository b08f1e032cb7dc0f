package audit

import (
	"strings"

	"github.com/tidwall/gjson"
)

// Bounds on the comparison of two requests: a pair that differs in more
// places, or deeper, is counted as not analysed.
const (
	maxPairPaths = 64 // differing paths kept per pair
	maxDiffDepth = 32 // levels descended; deeper, the whole value differs
)

// differ lists where two canonical JSON documents differ: body paths as
// the fingerprint's path syntax writes them, with "#" for every array
// element ("items.#.note"), and for intent documents the other parts as
// policy.DiffLabel names them ("header X-Api-Version", "method"). Work is
// linear in the size of the documents: members are matched through a map,
// never pairwise.
type differ struct {
	paths    []string // distinct, in the order found
	body     []bool   // per path: a body path, which an ignore entry can remove
	overflow bool     // more than maxPairPaths
}

func (d *differ) add(p string, body bool) {
	for _, x := range d.paths {
		if x == p {
			return
		}
	}
	if len(d.paths) == maxPairPaths {
		d.overflow = true
		return
	}
	d.paths = append(d.paths, p)
	d.body = append(d.body, body)
}

// onlyBody reports whether every difference is a body path.
func (d *differ) onlyBody() bool {
	for _, b := range d.body {
		if !b {
			return false
		}
	}
	return true
}

// values compares the canonical values a and b (a missing one does not
// exist) at body path prefix ("" for the whole body).
func (d *differ) values(prefix string, a, b gjson.Result, depth int) {
	if a.Raw == b.Raw || d.overflow {
		return
	}
	if depth < maxDiffDepth {
		switch {
		case a.IsObject() && b.IsObject():
			d.members(prefix, a, b, depth)
			return
		case a.IsArray() && b.IsArray():
			if ea, eb := a.Array(), b.Array(); len(ea) == len(eb) {
				for i := range ea {
					d.values(joinPath(prefix, "#"), ea[i], eb[i], depth+1)
				}
				return
			}
		}
	}
	if prefix == "" {
		d.add("(body)", false) // the whole body: no ignore entry removes it
		return
	}
	d.add(prefix, true)
}

// members compares two objects member by member.
func (d *differ) members(prefix string, a, b gjson.Result, depth int) {
	mb := map[string]gjson.Result{}
	b.ForEach(func(k, v gjson.Result) bool {
		mb[k.Str] = v
		return true
	})
	a.ForEach(func(k, v gjson.Result) bool {
		w := mb[k.Str]
		delete(mb, k.Str)
		d.values(joinPath(prefix, escapeName(k.Str)), v, w, depth+1)
		return !d.overflow
	})
	b.ForEach(func(k, v gjson.Result) bool { // members only b has
		if _, ok := mb[k.Str]; ok {
			d.add(joinPath(prefix, escapeName(k.Str)), true)
		}
		return !d.overflow
	})
}

// intentDocuments compares two intent documents, as
// fingerprint.Fingerprinter.AppendIntent writes them.
func (d *differ) intentDocuments(a, b string) {
	da, db := gjson.Parse(a), gjson.Parse(b)
	for _, part := range []string{"method", "path"} {
		if da.Get(part).Raw != db.Get(part).Raw {
			d.add(part, false)
		}
	}
	for _, part := range [][2]string{{"headers", "header "}, {"query", "query "}} {
		d.names(da.Get(part[0]), db.Get(part[0]), func(name string, _, _ gjson.Result) {
			d.add(part[1]+name, false)
		})
	}
	d.values("", da.Get("body"), db.Get("body"), 0)
	// Intent paths: the value each selected, and where it selected nothing.
	d.names(da.Get("intent"), db.Get("intent"), func(path string, x, y gjson.Result) {
		if multiValue(path) {
			d.add(path, true)
			return
		}
		d.values(path, x, y, 0)
	})
	d.names(da.Get("absent"), db.Get("absent"), func(path string, _, _ gjson.Result) {
		d.add(path, true)
	})
}

// names calls differs for each member name of the objects a and b whose
// values differ.
func (d *differ) names(a, b gjson.Result, differs func(name string, x, y gjson.Result)) {
	mb := map[string]gjson.Result{}
	b.ForEach(func(k, v gjson.Result) bool {
		mb[k.Str] = v
		return true
	})
	a.ForEach(func(k, v gjson.Result) bool {
		w, ok := mb[k.Str]
		delete(mb, k.Str)
		if !ok || v.Raw != w.Raw {
			differs(k.Str, v, w)
		}
		return true
	})
	b.ForEach(func(k, v gjson.Result) bool {
		if _, ok := mb[k.Str]; ok {
			differs(k.Str, gjson.Result{}, v)
		}
		return true
	})
}

func joinPath(prefix, seg string) string {
	if prefix == "" {
		return seg
	}
	return prefix + "." + seg
}

// escapeName writes a member name as one path segment: the characters the
// path syntax gives a meaning are escaped with a backslash, and a name of
// digits only starts with one, so that it never reads as an array index.
func escapeName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if strings.IndexByte(`\.|*?@[]{}!#`, c) >= 0 || i == 0 && strings.Trim(name, "0123456789") == "" {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// multiValue reports whether a path has a "#" segment.
func multiValue(p string) bool {
	for _, seg := range strings.Split(p, ".") {
		if seg == "#" {
			return true
		}
	}
	return false
}
