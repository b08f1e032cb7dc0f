// Package testenv tells tests where the real services they need are: a
// Redis server, a Redis Cluster and a PostgreSQL database, named by
// environment variables. Without them such tests skip with one line
// saying how to run them; with IDEMPRINT_TEST_REQUIRE=1 (set by .ci/run)
// a missing service fails the test instead, so CI never passes by
// skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// The environment variables naming the services.
const (
	// Redis is a redis:// URL of a single Redis server, such as
	// redis://127.0.0.1:6379/0.
	Redis = "IDEMPRINT_TEST_REDIS"
	// RedisCluster is a comma-separated list of the host:port addresses
	// of a Redis Cluster's nodes, such as
	// 127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003.
	RedisCluster = "IDEMPRINT_TEST_REDIS_CLUSTER"
	// Postgres is a postgres:// URL of a PostgreSQL database in which
	// tests may create schemas, such as
	// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
	Postgres = "IDEMPRINT_TEST_POSTGRES"
	// Require, set to 1, turns a skip for a missing service into a
	// failure.
	Require = "IDEMPRINT_TEST_REQUIRE"
)

// Lookup returns the value of the environment variable name, or skips the
// test (fails it when IDEMPRINT_TEST_REQUIRE=1) with a one-line hint
// naming the variable and an example value.
func Lookup(t testing.TB, name, example string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	missing(t, "set "+name+"="+example+" to run this test against a real server (.ci/run does)")
	return ""
}

// LookPath returns the path of the executable file, looked up in PATH as
// [exec.LookPath] does, for a test that runs its own server; or skips the
// test (fails it when IDEMPRINT_TEST_REQUIRE=1) with a one-line hint
// naming the package that provides it.
func LookPath(t testing.TB, file, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(file); err == nil {
		return p
	}
	missing(t, "install "+pkg+" (for "+file+") to run this test (.ci/run does)")
	return ""
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(Require) == "1" {
		t.Fatal(msg + "; " + Require + "=1 forbids skipping")
	}
	t.Skip(msg)
}
