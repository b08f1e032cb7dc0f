// Command idemprint canonicalizes JSON, computes request fingerprints and
// explains what an idempotency policy does with a second request that reuses
// a key. Run "idemprint help" for the commands.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
