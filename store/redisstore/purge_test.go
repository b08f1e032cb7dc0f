package redisstore_test

import (
	"context"
	"testing"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/redis/go-redis/v9"
)

// PurgeTenant deletes exactly the tenant's records, primary keys and new
// identities, in several SCAN batches, whatever bytes the tenant holds:
// glob characters are not patterns, and another tenant's key that spells
// the tenant's part of a storage key is not matched.
func TestPurgeTenant(t *testing.T) {
	t.Run("Node", func(t *testing.T) { testPurge(t, nodeClient(t)) })
	t.Run("Cluster", func(t *testing.T) { testPurge(t, clusterClient(t)) })
}

func testPurge(t *testing.T, client redis.UniversalClient) {
	s := newStore(t, client)
	// Several stores on one prefix: the same records, any batch size.
	small, err := redisstore.New(client, redisstore.Options{Prefix: prefixOf(t, s), ScanCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rule := testRule(t)
	type rec struct {
		tenant, key string
		mismatch    bool // a second request with another body: a new identity too
	}
	const victim = "a*[b]?\\:{}"
	records := []rec{
		{victim, "k1", true}, {victim, "k2", false}, {victim, "k3", false}, {victim, "k4", true},
		{victim, "k5", false}, {victim, "k6", false}, {victim, "k7", false},
		{"aX[b]?\\:{}", "k1", false}, // matched by the glob if it were not escaped
		{"a", "k1", false},
		{"other", ":10:" + victim + ":", false}, // the tenant's part, in a key
		{"a*[b]?\\:{}x", "k1", false},           // a longer tenant with the same start
	}
	want := 0
	for _, r := range records {
		complete(t, s, rule, execute(t, s, rule, testRequest(t, rule, r.tenant, r.key, 1)))
		if r.tenant == victim {
			want++
		}
		if r.mismatch {
			if c := execute(t, s, rule, testRequest(t, rule, r.tenant, r.key, 2)); c.Decision.Action != policy.ExecuteAsNew {
				t.Fatalf("Acquire of a mismatch = %v; want execute-as-new", c.Decision.Action)
			}
			want++
		}
	}
	n, err := small.PurgeTenant(ctx, victim)
	if err != nil || n != want {
		t.Fatalf("PurgeTenant = %d, %v; want %d records", n, err, want)
	}
	for _, r := range records {
		for amount := 1; amount <= 2; amount++ {
			req := testRequest(t, rule, r.tenant, r.key, amount)
			pk, nk, _ := rule.StorageKeys(req)
			for _, k := range []string{pk, nk} {
				got, err := s.Read(ctx, k)
				if err != nil {
					t.Fatal(err)
				}
				if r.tenant == victim && got != nil {
					t.Errorf("tenant %q key %q: a record survived the purge", r.tenant, r.key)
				}
				if r.tenant != victim && k == pk && got == nil {
					t.Errorf("tenant %q key %q: the purge of %q deleted it", r.tenant, r.key, victim)
				}
			}
		}
	}
	if n, err := s.PurgeTenant(ctx, victim); err != nil || n != 0 {
		t.Errorf("PurgeTenant again = %d, %v; want 0", n, err)
	}
}

// prefixOf returns the prefix of s's keys.
func prefixOf(t *testing.T, s *redisstore.Store) string {
	t.Helper()
	k := s.Key("x")
	for i := range len(k) {
		if k[i] == '{' {
			return k[:i]
		}
	}
	t.Fatalf("key %q has no hash tag", k)
	return ""
}
