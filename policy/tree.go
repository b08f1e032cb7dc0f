package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
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

// decodeTree decodes the JSON text data, which must be valid.
func decodeTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return readNode(dec, data)
}

func readNode(dec *json.Decoder, data []byte) (*node, error) {
	n := &node{off: valueStart(data, dec.InputOffset())}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		n.kind = kindNull
	case bool:
		n.kind, n.boolean = kindBool, t
	case json.Number:
		n.kind, n.str = kindNumber, string(t)
	case string:
		n.kind, n.str = kindString, t
	case json.Delim:
		if t == '[' {
			n.kind = kindArray
			for dec.More() {
				e, err := readNode(dec, data)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
		} else {
			n.kind = kindObject
			for dec.More() {
				off := valueStart(data, dec.InputOffset())
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, ok := tok.(string)
				if !ok {
					return nil, errors.New("object member name is not a string")
				}
				v, err := readNode(dec, data)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{name, off, v})
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	return n, nil
}

// valueStart returns the offset of the value that follows off, skipping
// whitespace and the separators the decoder has not consumed yet.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
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
