// Checks docs/query-id/vectors.json with Go's own HMAC through the documented Go minting file,
// then mints ids with it and prints them as JSON for the TypeScript side to verify.
//
// query-id-vectors.test.ts builds it in a scratch module beside a copy of mint_query_id.go
// (package queryid): go run . <repo root>
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"querycheck/queryid"
)

type vectors struct {
	Keys []struct {
		Kid    string `json:"kid"`
		Secret string `json:"secret"`
	} `json:"keys"`
	Now   int64 `json:"now"`
	Valid []struct {
		Name    string `json:"name"`
		Kid     string `json:"kid"`
		Header  string `json:"header"`
		Payload string `json:"payload"`
		Token   string `json:"token"`
	} `json:"valid"`
}

func main() {
	text, err := os.ReadFile(filepath.Join(os.Args[1], "docs", "query-id", "vectors.json"))
	if err != nil {
		panic(err)
	}
	var v vectors
	if err := json.Unmarshal(text, &v); err != nil {
		panic(err)
	}
	secrets := map[string]string{}
	for _, k := range v.Keys {
		secrets[k.Kid] = k.Secret
	}
	failures := []string{}
	for _, vector := range v.Valid {
		// The exact texts of the vector, signed as the minting function signs its own.
		if got := queryid.Sign([]byte(vector.Header), []byte(vector.Payload), secrets[vector.Kid]); got != vector.Token {
			failures = append(failures, fmt.Sprintf("%s: Sign gives %s", vector.Name, got))
		}
	}
	current := v.Keys[0]
	now := time.Unix(v.Now, 0)
	session, err := queryid.MintQueryID(current.Kid, current.Secret, "dashboard-signups", queryid.Options{
		Params: map[string]any{"tenant": "acme"}, Subject: "alice@acme", Range: "7d", Now: now,
	})
	if err != nil {
		panic(err)
	}
	public, err := queryid.MintQueryID(current.Kid, current.Secret, "public-events", queryid.Options{
		Params: map[string]any{"tenant": "globex"}, Public: true, Now: now,
		Audience: []string{"https://blog.example.com"},
	})
	if err != nil {
		panic(err)
	}
	_, neither := queryid.MintQueryID(current.Kid, current.Secret, "public-events", queryid.Options{})
	if neither == nil {
		failures = append(failures, "an id neither public nor session-bound was minted")
	}
	out, _ := json.Marshal(map[string]any{
		"failures": failures,
		"minted":   map[string]string{"session": session, "public": public},
	})
	fmt.Println(string(out))
}
