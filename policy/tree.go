package policy

import (
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/internal/jsonwire"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// node is one value of a policy document, with where it starts. The
// document has been validated by package canonical before it is decoded, so
// names are unique and strings are valid UTF-8.
type node struct {
	kind    kind
	off     int64
	str     string // a string's value, or a number's literal
	boolean bool
	elems   []*node
	members []member
}

// member is one name-value pair of an object, in document order.
type member struct {
	name string
	off  int64 // where the name starts
	val  *node
}

// decodeTree decodes the JSON text data, which must be valid: it is
// checked again, so an invalid one is an error, not a panic.
func decodeTree(data []byte) (*node, error) {
	if err := jsonwire.Validate(jsonwire.Options{MaxDepth: canonical.DefaultMaxDepth}, data); err != nil {
		return nil, err
	}
	n, _ := readNode(data, jsonwire.SkipSpace(data, 0))
	return n, nil
}

// readNode decodes the value at data[i] of a valid text and returns it and
// the offset just past it.
func readNode(data []byte, i int) (*node, int) {
	n := &node{off: int64(i)}
	switch data[i] {
	case '{', '[':
		object := data[i] == '{'
		n.kind = kindArray
		if object {
			n.kind = kindObject
		}
		i = jsonwire.SkipSpace(data, i+1)
		for data[i] != '}' && data[i] != ']' {
			var v *node
			if object {
				off := i
				end := jsonwire.SkipString(data, i)
				name := string(jsonwire.AppendUnquoted(nil, data[i:end]))
				i = jsonwire.SkipSpace(data, jsonwire.SkipSpace(data, end)+1) // past the colon
				v, i = readNode(data, i)
				n.members = append(n.members, member{name, int64(off), v})
			} else {
				v, i = readNode(data, i)
				n.elems = append(n.elems, v)
			}
			i = jsonwire.SkipSpace(data, i)
			if data[i] == ',' {
				i = jsonwire.SkipSpace(data, i+1)
			}
		}
		return n, i + 1
	case '"':
		end := jsonwire.SkipString(data, i)
		n.kind, n.str = kindString, string(jsonwire.AppendUnquoted(nil, data[i:end]))
		return n, end
	case 't':
		n.kind, n.boolean = kindBool, true
		return n, i + len("true")
	case 'f':
		n.kind = kindBool
		return n, i + len("false")
	case 'n':
		n.kind = kindNull
		return n, i + len("null")
	}
	end := jsonwire.SkipValue(data, i)
	n.kind, n.str = kindNumber, string(data[i:end])
	return n, end
}

// get returns the member named name, or nil.
func (n *node) get(name string) *node {
	for _, m := range n.members {
		if m.name == name {
			return m.val
		}
	}
	return nil
}

// lookup returns the node at the RFC 6901 pointer ptr below n or, when ptr
// does not resolve completely, the deepest node found on the way.
func (n *node) lookup(ptr string) *node {
	if ptr == "" {
		return n
	}
	cur := n
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		var next *node
		switch cur.kind {
		case kindObject:
			next = cur.get(tok)
		case kindArray:
			if i, err := strconv.Atoi(tok); err == nil && strconv.Itoa(i) == tok && i >= 0 && i < len(cur.elems) {
				next = cur.elems[i]
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// appendToken returns ptr extended by the reference token tok, escaped as
// RFC 6901 §3 requires.
func appendToken(ptr, tok string) string {
	if strings.ContainsAny(tok, "~/") {
		tok = strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
	}
	return ptr + "/" + tok
}
