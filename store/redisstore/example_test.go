package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/redisstore"
	"github.com/redis/go-redis/v9"
)

// A first request reserves its key and completes; its retry replays the
// stored response. The client may be a redis.NewClusterClient or a
// redis.NewFailoverClient just as well. It needs a Redis server, so it
// has no output to check.
func ExampleNew() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	defer client.Close()
	s, err := redisstore.New(client, redisstore.Options{Prefix: "idemprint:"})
	if err != nil {
		log.Fatal(err)
	}

	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /pay", "fingerprint": {"intent": ["amount"]}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/pay")
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/pay",
		Header: http.Header{"Idempotency-Key": {"order-1"}},
		Body:   []byte(`{"amount": 10}`),
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c, err := store.Acquire(ctx, s, rule, req)
	if err != nil {
		log.Fatal(err) // store.ErrUnavailable: answer 503, do not execute
	}
	if c.Decision.Action == policy.Execute {
		// Run the handler, then store its response.
		done, err := rule.Complete(&c.Record, policy.Response{Status: 201, Body: []byte(`{"id": 1}`)}, c.Now)
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Write(ctx, done, store.Guard{}); err != nil {
			log.Fatal(err)
		}
	}

	retry, err := store.Acquire(ctx, s, rule, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(retry.Decision.Action, retry.Decision.Response.Status)
}
