#!/usr/bin/env bash
# ci.sh checks the bench module: formatting, vet, the corpus, the
# differential tests and fuzz seeds, and every benchmark run once.
set -euo pipefail
cd "$(dirname "$0")"

unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
	echo "gofmt needed:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test ./...
go test -run='^$' -bench=. -benchtime=1x ./...
