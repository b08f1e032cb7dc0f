#!/usr/bin/env bash
# campaign.sh runs the fuzz targets of package fuzz for a long time, one
# after the other, and sums up what each did.
#
# Environment:
#   FUZZTIME     how long each target runs (go test -fuzztime): a duration
#                such as 1h or 30m, or a count such as 1000000x; default 1h
#   TARGETS      targets to run, separated by spaces; default every Fuzz
#                function in fuzz/*_test.go
#   PARALLEL     fuzzing workers (go test -parallel); default GOMAXPROCS
#   MINIMIZETIME time to minimize each new or failing input
#                (go test -fuzzminimizetime); default 20s, not go's 60s,
#                which stalls on long inputs
#   PROPS_SCALE  if set, first run the property tests with
#                -props.scale=$PROPS_SCALE (10,000 × that many cases each)
#
# Logs go to fuzz/out/, which is not committed. A target that fails leaves
# its input in fuzz/testdata/fuzz/<Target>/; fix the bug, then commit that
# file as a regression. The exit status is 1 if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-1h}
targets=${TARGETS:-$(grep -ho '^func Fuzz[A-Za-z0-9_]*' fuzz/*_test.go | sed 's/^func //' | sort -u)}
out=fuzz/out
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
flags=("-fuzzminimizetime=${MINIMIZETIME:-20s}")
if [[ -n ${PARALLEL:-} ]]; then
	flags+=("-parallel=$PARALLEL")
fi

status=0
rows=()

if [[ -n ${PROPS_SCALE:-} ]]; then
	log="$out/props-$stamp.log"
	echo "== properties at -props.scale=$PROPS_SCALE (log: $log)"
	start=$(date +%s)
	if go test ./fuzz -run='^Test' -count=1 -v -props.scale="$PROPS_SCALE" >"$log" 2>&1; then
		result=PASS
	else
		result=FAIL
		status=1
	fi
	rows+=("$(printf '%-24s %-4s %8ss %14s %s' properties "$result" "$(($(date +%s) - start))" - "$log")")
fi

for target in $targets; do
	log="$out/$target-$stamp.log"
	echo "== $target for $fuzztime (log: $log)"
	start=$(date +%s)
	if go test ./fuzz -run='^$' -fuzz="^$target\$" -fuzztime="$fuzztime" "${flags[@]}" >"$log" 2>&1; then
		result=PASS
	else
		result=FAIL
		status=1
	fi
	secs=$(($(date +%s) - start))
	# The last progress line reads:
	#   fuzz: elapsed: 1h0m0s, execs: 123456789 (34293/sec), new interesting: 12 (total: 345)
	last=$(grep -a 'fuzz: elapsed:' "$log" | tail -n 1 || true)
	execs=$(sed -n 's/.*execs: \([0-9]*\).*/\1/p' <<<"$last")
	interesting=$(sed -n 's/.*new interesting: \([0-9]*\).*/\1/p' <<<"$last")
	note="new interesting: ${interesting:-?}"
	if [[ $result == FAIL ]]; then
		note=$(grep -ao 'Failing input written to [^ ]*' "$log" | head -n 1 || true)
		note=${note:-"see $log"}
	fi
	rows+=("$(printf '%-24s %-4s %8ss %14s %s' "$target" "$result" "$secs" "${execs:-?}" "$note")")
done

echo
printf '%-24s %-4s %9s %14s %s\n' target result time execs notes
printf '%s\n' "${rows[@]}"
exit "$status"
