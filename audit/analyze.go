package audit

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/tidwall/gjson"
)

// Bounds on what the analysis of one rule keeps.
const (
	maxLabels = 1024 // differing intent paths counted
	maxVaries = 1024 // body paths whose variation is counted
	maxSets   = 256  // distinct sets of differing paths, each with one example pair
)

// pairJob is two requests of one key for the analyzer: a, which made the
// record the engine compared b with (or, after a release, came before b),
// and b.
type pairJob struct {
	an     *ruleAnalysis
	reason policy.Reason
	a, b   *snapshot
}

// ruleAnalysis is what the analyzer learns of one rule's key reuses. It is
// written by the analyzer's goroutine only, and read once it is done.
type ruleAnalysis struct {
	fp   *fingerprint.Fingerprinter
	spec fingerprint.Spec

	// pairs counts the pairs of requests of one key, retries and
	// mismatches, whose bodies differ; varies, per body path, in how many
	// of them it differs.
	pairs       int64
	varies      map[string]int64
	variesLost  int64 // differences at paths beyond maxVaries
	labels      map[string]*labelStat
	labelsLost  int64
	sets        map[string]*setStat
	unanalysed  int64 // mismatches not analysed: beyond the bounds
	bufA, bufB  []byte
	canA, canB  []byte
	differences differ
}

type labelStat struct {
	count int64
	a, b  pos
}

// setStat counts the mismatches that differ at exactly one set of body
// paths, with one of them as the example the patch is checked on.
type setStat struct {
	key   string
	paths []string
	count int64
	a, b  *snapshot
}

func newRuleAnalysis(fp *fingerprint.Fingerprinter) *ruleAnalysis {
	return &ruleAnalysis{
		fp: fp, spec: fp.Spec(),
		varies: map[string]int64{}, labels: map[string]*labelStat{}, sets: map[string]*setStat{},
	}
}

// pair compares the two requests of j: for a mismatch, their intent
// documents under the rule's spec, which tell what the engine saw differ;
// for every pair, their whole bodies, which tell which members vary
// between requests of one key.
func (an *ruleAnalysis) pair(j pairJob) {
	if j.reason == policy.ReasonMismatch {
		an.mismatch(j)
	}
	if bytes.Equal(j.a.fr.Body, j.b.fr.Body) {
		return
	}
	var err error
	opts := canonical.Options{Numbers: canonical.Exact}
	if an.canA, err = opts.Append(an.canA[:0], j.a.fr.Body); err != nil {
		return
	}
	if an.canB, err = opts.Append(an.canB[:0], j.b.fr.Body); err != nil {
		return
	}
	d := &an.differences
	d.reset()
	d.values("", gjson.Parse(string(an.canA)), gjson.Parse(string(an.canB)), 0)
	if len(d.paths) == 0 {
		return
	}
	an.pairs++
	for i, p := range d.paths {
		if !d.body[i] {
			continue
		}
		if _, ok := an.varies[p]; ok || len(an.varies) < maxVaries {
			an.varies[p]++
		} else {
			an.variesLost++
		}
	}
}

// intent returns the intent document of s: the one its request kept, or
// one computed into buf.
func (an *ruleAnalysis) intent(buf *[]byte, s *snapshot) ([]byte, error) {
	if s.intent != nil {
		return s.intent, nil
	}
	var err error
	*buf, err = an.fp.AppendIntent((*buf)[:0], s.fr)
	return *buf, err
}

func (d *differ) reset() {
	d.paths, d.body, d.overflow = d.paths[:0], d.body[:0], false
}

func (an *ruleAnalysis) mismatch(j pairJob) {
	docA, errA := an.intent(&an.bufA, j.a)
	docB, errB := an.intent(&an.bufB, j.b)
	if errA != nil || errB != nil {
		an.unanalysed++
		return
	}
	d := &an.differences
	d.reset()
	d.intentDocuments(string(docA), string(docB))
	for _, p := range d.paths {
		l := an.labels[p]
		if l == nil {
			if len(an.labels) >= maxLabels {
				an.labelsLost++
				continue
			}
			l = &labelStat{a: j.a.at, b: j.b.at}
			an.labels[p] = l
		}
		l.count++
	}
	if d.overflow || len(d.paths) == 0 || !d.onlyBody() {
		if d.overflow {
			an.unanalysed++
		}
		return
	}
	paths := slices.Clone(d.paths)
	slices.Sort(paths)
	key := strings.Join(paths, "\n")
	s := an.sets[key]
	if s == nil {
		if len(an.sets) >= maxSets {
			an.unanalysed++
			return
		}
		s = &setStat{key: key, paths: paths, a: j.a, b: j.b}
		an.sets[key] = s
	}
	s.count++
}

// volatile reports whether the body path p varies between the requests of
// one key often enough to be noise rather than intent: in at least two
// pairs, and in more than half of the pairs whose bodies differ.
func (an *ruleAnalysis) volatile(p string) bool {
	n := an.varies[p]
	return n >= 2 && 2*n > an.pairs
}

// suggest finds the ignore entries that turn false conflicts into
// retries, and checks them: the patch's spec is compiled and every set's
// example pair fingerprinted again. It returns the suggestions, each with
// the mismatches that the patch removes only with it, and the patch with
// the mismatches it removes, or nil when it removes none.
func (an *ruleAnalysis) suggest(rule *policy.Rule) ([]Suggestion, *Patch) {
	// Sets of differing paths that hold only volatile, ignorable paths.
	part := map[string]int64{}
	valid := map[string]bool{}
	for _, s := range an.sortedSets() {
		ok := true
		for _, p := range s.paths {
			if _, seen := valid[p]; !seen {
				_, err := an.compile([]string{p})
				valid[p] = err == nil
			}
			ok = ok && an.volatile(p) && valid[p]
		}
		if ok {
			for _, p := range s.paths {
				part[p] += s.count
			}
		}
	}
	if len(part) == 0 {
		return nil, nil
	}
	var entries []string
	for p := range part {
		entries = append(entries, p)
	}
	sort.Slice(entries, func(i, j int) bool {
		if part[entries[i]] != part[entries[j]] {
			return part[entries[i]] > part[entries[j]]
		}
		return entries[i] < entries[j]
	})
	// Keep what compiles together (an entry may pass alone and not with
	// the others: the spec holds at most 64 ignore paths).
	var chosen []string
	for _, e := range entries {
		if _, err := an.compile(append(slices.Clone(chosen), e)); err == nil {
			chosen = append(chosen, e)
		}
	}
	removed, total := an.removed(chosen, an.sortedSets())
	if total == 0 {
		return nil, nil
	}
	// Drop entries the others make useless, least used first, until each
	// one removes a mismatch that no other removes.
	var marginal map[string]int64
	for {
		marginal = map[string]int64{}
		drop := -1
		for i, e := range chosen {
			without := slices.Delete(slices.Clone(chosen), i, i+1)
			_, left := an.removed(without, removed)
			marginal[e] = total - left
			if marginal[e] == 0 {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		chosen = slices.Delete(chosen, drop, drop+1)
	}
	var out []Suggestion
	for _, e := range chosen {
		out = append(out, Suggestion{Ignore: e, Varies: an.varies[e], Pairs: an.pairs, Removes: marginal[e]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Removes != out[j].Removes {
			return out[i].Removes > out[j].Removes
		}
		return out[i].Ignore < out[j].Ignore
	})
	spec := an.spec
	add := slices.Clone(chosen)
	slices.Sort(add)
	spec.Ignore = append(slices.Clone(spec.Ignore), add...)
	return out, &Patch{Pointer: rule.Pointer() + "/fingerprint", Fingerprint: spec, Removes: total}
}

// compile compiles the rule's spec with extra ignore entries.
func (an *ruleAnalysis) compile(extra []string) (*fingerprint.Fingerprinter, error) {
	spec := an.spec
	spec.Ignore = append(slices.Clone(spec.Ignore), extra...)
	return fingerprint.Compile(spec)
}

// removed returns the sets whose example pair has equal fingerprints
// under the rule's spec with the extra ignore entries, and how many
// mismatches they hold, among the sets given. Sets are decided by their example: which paths differ decides whether
// an ignore entry removes them all, and entries name no array index.
func (an *ruleAnalysis) removed(extra []string, among []*setStat) ([]*setStat, int64) {
	f, err := an.compile(extra)
	if err != nil {
		return nil, 0
	}
	var out []*setStat
	var n int64
	for _, s := range among {
		fa, errA := f.Sum(s.a.fr)
		fb, errB := f.Sum(s.b.fr)
		if errA == nil && errB == nil && fa == fb {
			out = append(out, s)
			n += s.count
		}
	}
	return out, n
}

func (an *ruleAnalysis) sortedSets() []*setStat {
	out := make([]*setStat, 0, len(an.sets))
	for _, s := range an.sets {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
