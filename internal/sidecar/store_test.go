package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idemprint/idemprint/internal/sidecar"
	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/store"
)

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		cluster []string
		wantErr error
	}{
		{"Default", "", nil, nil},
		{"Memory", "memory", nil, nil},
		{"Invalid/Scheme", "mysql://localhost/db", nil, sidecar.ErrStoreSpec},
		{"Invalid/NotAURL", "redis:// bad", nil, sidecar.ErrStoreSpec},
		{"Invalid/ClusterAndURL", "redis://127.0.0.1:6379", []string{"127.0.0.1:7001"}, sidecar.ErrStoreSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, closeStore, err := sidecar.Open(context.Background(), tt.spec, tt.cluster, nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Open(%q, %q) error = %v, want %v", tt.spec, tt.cluster, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			defer closeStore()
			if _, ok := st.(*store.Memory); !ok {
				t.Errorf("Open(%q) = %T, want *store.Memory", tt.spec, st)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"memory":                          "memory",
		"redis://:hunter2@127.0.0.1:6379": "redis://:xxxxx@127.0.0.1:6379",
		"postgres://u:pw@h/db":            "postgres://u:xxxxx@h/db",
		"postgres://u@h/db":               "postgres://u@h/db",
	} {
		if got := sidecar.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A PostgreSQL store's connections are open when Open returns: a pool that
// connected on demand made the first burst of requests wait for new
// backends, long enough under load for completions to miss their leases
// and for duplicates to execute again (TestServeLoadPostgres did, at the
// start of its run). A URL's pool_min_conns still decides.
func TestOpenPostgresConnections(t *testing.T) {
	base := testenv.Lookup(t, testenv.Postgres, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	tests := []struct {
		name     string
		params   map[string]string
		min, max int // connections open when Open returns
	}{
		{"Default", nil, 32, 32},
		{"MaxConns", map[string]string{"pool_max_conns": "5"}, 5, 5},
		{"MinConns", map[string]string{"pool_max_conns": "5", "pool_min_conns": "2"}, 2, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			app := fmt.Sprintf("idemprint_open_%d", time.Now().UnixNano())
			q := u.Query()
			q.Set("application_name", app)
			for k, v := range tt.params {
				q.Set(k, v)
			}
			u.RawQuery = q.Encode()
			ctx := context.Background()
			_, closeStore, err := sidecar.Open(ctx, u.String(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore()
			conn, err := pgx.Connect(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n < tt.min || n > tt.max {
				t.Errorf("%d connections open after Open, want %d to %d", n, tt.min, tt.max)
			}
		})
	}
}
