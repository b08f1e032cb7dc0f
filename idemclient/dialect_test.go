package idemclient

import (
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/internal/sidecar"
	"github.com/idemprint/idemprint/policy"
)

// TestIdemprintTypes: the problem types the client reads are the ones the
// server writes. The client spells them out rather than importing the
// server's packages, which a client does not need.
func TestIdemprintTypes(t *testing.T) {
	for _, tc := range []struct{ client, server string }{
		{typeInFlight, policy.TypeInFlight},
		{typeKeyReuse, policy.TypeKeyReuse},
		{typeOtherRoute, policy.TypeOtherRoute},
		{typeStoreUnavailable, idemhttp.TypeStoreUnavailable},
		{typeOutcomeUnknown, sidecar.TypeUpstreamOutcomeUnknown},
		{typeUnreachable, sidecar.TypeUpstreamUnreachable},
		{idemprintBase, policy.ProblemBase},
	} {
		if tc.client != tc.server {
			t.Errorf("the client reads %s, the server writes %s", tc.client, tc.server)
		}
	}
}
