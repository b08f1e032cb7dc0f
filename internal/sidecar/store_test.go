package sidecar_test

import (
	"context"
	"errors"
	"testing"

	"github.com/idemprint/idemprint/internal/sidecar"
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
