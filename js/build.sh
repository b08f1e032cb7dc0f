#!/bin/sh
# Builds idemprint.wasm, the WebAssembly reactor module of this package,
# from the Go fingerprint code of the repository around it.
set -eu
cd "$(dirname "$0")/.."
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -ldflags=-s -o js/idemprint.wasm ./cmd/idemprint-wasm
