#!/usr/bin/env bash
# campaign.sh runs every fuzz target of the repository for a long time, one
# after the other, and sums up what each did, with its executions per second
# so that a target that stalls shows.
#
# Environment:
#   FUZZTIME     how long each target runs (go test -fuzztime): a duration
#                such as 1h or 30m, or a count such as 1000000x; default 1h
#   TARGETS      targets to run, separated by spaces; default every Fuzz
#                function of the repository, bench/ (a nested module) too
#   PARALLEL     fuzzing workers (go test -parallel); default GOMAXPROCS
#   MINIMIZETIME time to minimize each new or failing input
#                (go test -fuzzminimizetime); default 20s, not go's 60s,
#                which stalls on long inputs
#   PROPS_SCALE  if set, first run the property tests with
#                -props.scale=$PROPS_SCALE (10,000 × that many cases each)
#
# Logs go to fuzz/out/, which is not committed. A target that fails leaves
# its input in <package>/testdata/fuzz/<Target>/; fix the bug, then commit
# that file as a regression. The end of a failing target's log is printed.
# The exit status is 1 if anything failed.
#
# A target fails the campaign when it writes a failing input, or when it
# cannot run at all (a build error, a failing seed). A run that ends in
# nothing but "context deadline exceeded", with no failing input, is a race
# in the fuzzing coordinator of Go 1.26 and earlier as -fuzztime expires
# (go.dev/issue/75804, fixed in Go 1.27), not a finding: it shows as FLAKE
# and does not fail the campaign. Run under Go 1.27 or later
# (GOTOOLCHAIN=go1.27.3, as .ci/run does), or with a count
# (FUZZTIME=1000000x), to avoid it.
#
# The summary has a row a target: its executions; execs/s, their average
# over the run; min/s, the slowest 3-second interval that go test reported;
# stalls, how many of those intervals had no execution at all (the fuzzer
# minimizing an input, or one input running for seconds). A healthy target
# has no stalls; a few mean slow inputs, many a target that needs bounds.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-1h}
out=fuzz/out
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
go version
flags=("-fuzzminimizetime=${MINIMIZETIME:-20s}")
if [[ -n ${PARALLEL:-} ]]; then
	flags+=("-parallel=$PARALLEL")
fi

# Every target, as "package-directory Target".
# Every directory that has one is searched, so a new target is never left
# out.
all=$(for dir in $(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | xargs -n1 dirname | sort -u); do
	grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed "s|^func |$dir |"
done | sort -u)
if [[ -n ${TARGETS:-} ]]; then
	selected=""
	for target in $TARGETS; do
		line=$(grep " $target\$" <<<"$all" || true)
		if [[ -z $line ]]; then
			echo "campaign.sh: no fuzz target $target; there are:" $(cut -d' ' -f2 <<<"$all") >&2
			exit 2
		fi
		selected+="$line"$'\n'
	done
	all=$selected
fi

# rates reads the progress lines of a go test -fuzz log,
#   fuzz: elapsed: 1m3s, execs: 123456 (2057/sec), new interesting: 12 (total: 345)
# and prints "execs execs/s min/s stalls". The last line, written when the
# run stops, covers a partial interval and is left out of min/s and stalls.
rates() {
	awk '
	function seconds(d,   t, u) {
		t = 0
		while (match(d, /^[0-9.]+[hms]/)) {
			u = substr(d, RLENGTH, 1)
			t += substr(d, 1, RLENGTH - 1) * (u == "h" ? 3600 : u == "m" ? 60 : 1)
			d = substr(d, RLENGTH + 1)
		}
		return t
	}
	$1 == "fuzz:" && $2 == "elapsed:" && $4 == "execs:" {
		n++
		elapsed[n] = seconds(substr($3, 1, length($3) - 1))
		execs[n] = $5
		rate = $6
		gsub(/[^0-9]/, "", rate)
		rates[n] = rate + 0
	}
	END {
		if (n == 0) { print "? ? ? ?"; exit }
		last = n > 1 ? n - 1 : n
		min = rates[1]
		for (i = 1; i <= last; i++) {
			if (rates[i] < min) min = rates[i]
			if (rates[i] == 0) stalls++
		}
		avg = elapsed[n] > 0 ? execs[n] / elapsed[n] : 0
		printf "%d %d %d %d\n", execs[n], avg, min, stalls
	}' "$1"
}

status=0
rows=()
row() { rows+=("$(printf '%-22s %-6s %7s %11s %9s %7s %6s  %s' "$@")"); }

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
	row properties "$result" "$(($(date +%s) - start))s" - - - - "$log"
fi

while read -r dir target; do
	[[ -n $target ]] || continue
	log="$out/$target-$stamp.log"
	echo "== $dir $target for $fuzztime (log: $log)"
	start=$(date +%s)
	# From the package's directory: bench is a module of its own.
	if (cd "$dir" && go test . -run='^$' -fuzz="^$target\$" -fuzztime="$fuzztime" "${flags[@]}") </dev/null >"$log" 2>&1; then
		result=PASS
	elif [[ $(awk '/^--- FAIL/ { f = 1; next } f && /^    / { print }' "$log") == "    context deadline exceeded" ]] &&
		! grep -q 'Failing input written' "$log"; then
		result=FLAKE
	else
		result=FAIL
		status=1
		echo "-- $target failed; the end of its log:"
		tail -n 30 "$log"
	fi
	secs=$(($(date +%s) - start))
	read -r execs persec minrate stalls < <(rates "$log")
	interesting=$(grep -a 'fuzz: elapsed:.*new interesting:' "$log" | tail -n 1 | sed -n 's/.*new interesting: \([0-9]*\).*/\1/p' || true)
	note="new interesting: ${interesting:-?}"
	if [[ $execs == "?" ]]; then
		note="no fuzzing: -fuzztime ended while it gathered baseline coverage"
	fi
	if [[ $result == FAIL ]]; then
		note=$(grep -ao 'Failing input written to [^ ]*' "$log" | head -n 1 || true)
		note=${note:-"see $log"}
	elif [[ $result == FLAKE ]]; then
		note="$note; go.dev/issue/75804 as -fuzztime ended, no failing input"
	fi
	row "$target" "$result" "${secs}s" "$execs" "$persec" "$minrate" "$stalls" "$note"
done <<<"$all"

echo
printf '%-22s %-6s %7s %11s %9s %7s %6s  %s\n' target result time execs execs/s min/s stalls notes
printf '%s\n' "${rows[@]}"
exit "$status"
