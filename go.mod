module github.com/idemprint/idemprint

go 1.25

require (
	github.com/google/go-cmp v0.7.0
	github.com/leanovate/gopter v0.2.11
	github.com/redis/go-redis/v9 v9.22.0
	github.com/tidwall/gjson v1.20.2
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
