package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSettingsDoc holds the settings table of the package documentation
// (doc.go) to the table the parser follows, settingTable: a setting added,
// renamed or given another default there must be documented here.
func TestSettingsDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "//\tfield ") {
			in = true
		}
		if in {
			text, ok := strings.CutPrefix(line, "//\t")
			if !ok {
				break
			}
			doc = append(doc, text)
		}
	}
	if len(doc) == 0 {
		t.Fatal("doc.go has no settings table (a line \"//\\tfield ...\")")
	}
	if diff := cmp.Diff(settingsDoc(), doc); diff != "" {
		t.Errorf("doc.go's settings table differs from settingTable (-table +doc.go):\n%s", diff)
	}
}

// TestSettingTable checks that each setting is complete, named once, and
// that its built-in default is of the type its parser gives.
func TestSettingTable(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range settingTable {
		switch {
		case seen[st.name]:
			t.Errorf("%s: declared twice", st.name)
		case st.parse == nil || st.set == nil || len(st.value) == 0 || len(st.def) == 0:
			t.Errorf("%s: incomplete: every setting is parsed, set and documented", st.name)
		}
		seen[st.name] = true
		var r Rule
		st.set(&r, st.zero) // panics when zero is not of the parser's type
	}
	want := []string{"key", "scope", "fingerprint", "on_mismatch", "mismatch_status", "on_spec_change",
		"cache", "ttl", "lease", "retry_after", "wait", "replay_header", "store_intent", "exclude_headers"}
	if diff := cmp.Diff(want, settingMembers()); diff != "" {
		t.Errorf("settingMembers mismatch (-want +got):\n%s", diff)
	}
}
