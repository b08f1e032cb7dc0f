package policy_test

import (
	"testing"

	"github.com/idemprint/idemprint/policy"
)

// TestNames checks the names actions and reasons are logged and counted
// by, the zero value ("none": no decision reached) included.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{policy.Action(0), "none"},
		{policy.Execute, "execute"},
		{policy.Replay, "replay"},
		{policy.ExecuteAsNew, "execute-as-new"},
		{policy.Reject, "reject"},
		{policy.PassThrough, "pass-through"},
		{policy.Action(99), "Action(99)"},
		{policy.Reason(0), "none"},
		{policy.ReasonMissingKey, "missing-key"},
		{policy.ReasonMalformedKey, "malformed-key"},
		{policy.ReasonFirst, "first"},
		{policy.ReasonRetry, "retry"},
		{policy.ReasonMismatch, "mismatch"},
		{policy.ReasonSpecChanged, "spec-changed"},
		{policy.ReasonOtherRoute, "other-route"},
		{policy.Reason(99), "Reason(99)"},
	} {
		if got := tc.got.String(); got != tc.want {
			t.Errorf("%T(%d).String() = %q, want %q", tc.got, tc.got, got, tc.want)
		}
	}
}
