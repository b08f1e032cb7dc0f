package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

func TestNewOptions(t *testing.T) {
	// A pool connects lazily: no server is needed to validate options.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, tc := range []struct {
		table string
		want  string // the quoted name, or "" for ErrInvalid
	}{
		{"", `"idemprint_records"`},
		{"idempotency", `"idempotency"`},
		{"billing.idemprint_records", `"billing"."idemprint_records"`},
		{"_x9", `"_x9"`},
		{strings.Repeat("a", 48), `"` + strings.Repeat("a", 48) + `"`},
		{strings.Repeat("a", 49), ""},
		{"Records", ""},
		{"9records", ""},
		{"a.b.c", ""},
		{".records", ""},
		{"records.", ""},
		{`re"cords`, ""},
		{"re cords", ""},
		{"records;drop", ""},
		{"récords", ""},
	} {
		s, err := pgstore.New(pool, pgstore.Options{Table: tc.table})
		if tc.want == "" {
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("New(Table %q): error %v, want ErrInvalid", tc.table, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(Table %q): %v", tc.table, err)
			continue
		}
		if got := s.Table(); got != tc.want {
			t.Errorf("New(Table %q).Table() = %s, want %s", tc.table, got, tc.want)
		}
	}
	if _, err := pgstore.New(nil, pgstore.Options{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("New(nil pool): error %v, want ErrInvalid", err)
	}
}
