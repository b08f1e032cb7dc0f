#!/usr/bin/env bash
# run.sh measures idemprint against its peers: it runs every benchmark of the
# bench module once per round, for ROUNDS rounds, so each case is sampled at
# several moments instead of in one burst; keeps the raw output and
# benchstat's report in out/; and prints one summary table.
#
# Environment:
#   ROUNDS     rounds (default 6, the fewest for which benchstat gives a
#              confidence interval)
#   BENCHTIME  -benchtime of one benchmark in one round (default 1s; about
#              7 minutes in all on 2 cores)
#   BENCH      -bench regexp (default "Canonical|Sum": BenchmarkCanonical and
#              BenchmarkSum, the table's; the others report their own units)
#   HUGE       set to 0 to leave out wide_huge, the 2,000,000-member object
#              (38 MB, generated in each round: about 40 s a round, most
#              of it the peers at one operation each)
#   MD         set to 1 for a Markdown table
set -euo pipefail
cd "$(dirname "$0")"

rounds=${ROUNDS:-6}
benchtime=${BENCHTIME:-1s}
bench=${BENCH:-Canonical|Sum}
huge=()
if [[ ${HUGE:-1} != 0 ]]; then
	huge=(-huge)
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p out
raw=out/raw-$stamp.txt

# One binary for every round, so all rounds measure the same code.
go test -c -o out/bench.test .
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	./out/bench.test -test.run='^$' -test.bench="$bench" -test.benchtime="$benchtime" \
		-test.count=1 -test.benchmem "${huge[@]}" >>"$raw"
done

go tool benchstat "$raw" >"out/benchstat-$stamp.txt" 2>&1
go tool benchstat -format csv "$raw" >"out/benchstat-$stamp.csv" 2>/dev/null
echo "raw: $raw; benchstat: out/benchstat-$stamp.txt" >&2
table_args=()
if [[ ${MD:-} == 1 ]]; then
	table_args+=(-md)
fi
go run ./cmd/benchtable "${table_args[@]}" "out/benchstat-$stamp.csv"
