package audit

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Apply returns the policy file src with the patch applied: the member at
// p.Pointer set to p.Fingerprint. The result is indented JSON with the
// members of each object in sorted order, as encoding/json writes maps;
// parse it with policy.Parse before use. It is an error when src is not a
// JSON object or p.Pointer does not name a member of a rule or of the
// defaults in it.
func (p *Patch) Apply(src []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, errors.New("audit: patch: the policy is not a JSON object: " + err.Error())
	}
	spec, err := json.Marshal(p.Fingerprint)
	if err != nil {
		return nil, err
	}
	bad := errors.New("audit: patch: pointer " + strconv.Quote(p.Pointer) + " names no rule or defaults of the policy")
	segs := strings.Split(strings.TrimPrefix(p.Pointer, "/"), "/")
	var obj map[string]json.RawMessage
	var put func(json.RawMessage) error
	switch {
	case len(segs) == 2 && segs[0] == "defaults":
		obj = map[string]json.RawMessage{}
		if raw, ok := doc["defaults"]; ok {
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, bad
			}
		}
		put = func(b json.RawMessage) error { doc["defaults"] = b; return nil }
	case len(segs) == 3 && segs[0] == "rules":
		var rules []json.RawMessage
		i, err := strconv.Atoi(segs[1])
		if json.Unmarshal(doc["rules"], &rules) != nil || err != nil || i < 0 || i >= len(rules) || json.Unmarshal(rules[i], &obj) != nil {
			return nil, bad
		}
		put = func(b json.RawMessage) error {
			rules[i] = b
			var err error
			doc["rules"], err = json.Marshal(rules)
			return err
		}
	default:
		return nil, bad
	}
	obj[segs[len(segs)-1]] = spec
	b, err := json.Marshal(obj)
	if err == nil {
		err = put(b)
	}
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}
