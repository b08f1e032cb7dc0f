// Command genlog writes a synthetic traffic log for "idemprint audit": see
// package genlog. For the benchmark's figures:
//
//	go run ./cmd/genlog -n 1000000 >out/1m.jsonl
//	go run ./cmd/genlog -policy >out/policy.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/idemprint/idemprint/bench/genlog"
)

func main() {
	var o genlog.Options
	flag.IntVar(&o.Requests, "n", 1_000_000, "requests to write")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed")
	flag.Float64Var(&o.Rate, "rate", 200, "requests a second, on average")
	flag.IntVar(&o.Tenants, "tenants", 8, "tenants")
	policy := flag.Bool("policy", false, "write the policy for the log instead of the log")
	flag.Parse()
	if *policy {
		fmt.Print(genlog.Policy)
		return
	}
	if err := genlog.Write(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
}
