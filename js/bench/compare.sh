#!/bin/sh
# compare.sh measures the npm package and the line protocol against native
# Go in interleaved rounds and prints benchstat's medians. Run it from the
# repository's root after js/build.sh:  ROUNDS=6 js/bench/compare.sh
set -eu
ROUNDS=${ROUNDS:-6}
out=$(mktemp -d)
go test -c -o "$out/bench.test" ./bench >/dev/null 2>&1 || (cd bench && go test -c -o "$out/bench.test" .)
go test -c -o "$out/cli.test" ./cmd/idemprint
go build -o "$out/idemprint" ./cmd/idemprint
spec='{"intent":["amountCents","currency","destination.iban","reference","debtor.id"]}'
node -e '
const body = require("fs").readFileSync("bench/testdata/corpus/payment_small.json", "utf8")
const line = JSON.stringify({ method: "POST", path: "/v1/payments", headers: {}, query: {}, body }) + "\n"
require("fs").writeFileSync(process.argv[1], line.repeat(100000))' "$out/pay.jsonl"
node --no-warnings js/bench/compile.js -count "$ROUNDS" > "$out/compile.txt"
for r in $(seq "$ROUNDS"); do
	node --no-warnings js/bench/sum.js -benchtime 0.5 >> "$out/node.txt"
	(cd bench && "$out/bench.test" -test.run '^$' -test.bench 'BenchmarkSumVsAppend/.*/sum$' -test.benchtime 0.5s) >> "$out/go.txt"
	(cd cmd/idemprint && "$out/cli.test" -test.run '^$' -test.bench '^BenchmarkJSONL$' -test.benchtime 20000x) >> "$out/jsonl.txt"
	# The command itself, 100,000 lines through a pipe: requests a second.
	node -e '
const { spawnSync } = require("child_process")
const input = require("fs").readFileSync(process.argv[1])
const t0 = process.hrtime.bigint()
const p = spawnSync(process.argv[2], ["fingerprint", "--jsonl", "--spec", process.argv[3]], { input, maxBuffer: 1 << 30 })
const s = Number(process.hrtime.bigint() - t0) / 1e9
if (p.status !== 0) throw new Error("status " + p.status)
console.log("BenchmarkJSONLProcess/payment_small\t100000\t" + (s * 1e9 / 100000).toFixed(1) + " ns/op")' "$out/pay.jsonl" "$out/idemprint" "$spec" >> "$out/jsonl.txt"
done
cat "$out/compile.txt"
ls -l js/idemprint.wasm | awk '{print "idemprint.wasm", $5, "bytes"}'
gzip -9 -c js/idemprint.wasm | wc -c | awk '{print "gzip -9", $1, "bytes"}'
cd bench
for f in node go jsonl; do go tool benchstat "$out/$f.txt"; done
echo "raw results in $out"
