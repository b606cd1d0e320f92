// Package queryid mints analytics-chart query ids in Go, for host apps not written in
// JavaScript.
//
// Copy this file into your app (as a package of its own); it needs only the standard library.
// The id format is specified in docs/query-id.md of the analytics-chart repository.
package queryid

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Options of MintQueryID. Give exactly one of Subject and Public.
type Options struct {
	// Params are the locked parameters, such as the viewer's tenant: strings, numbers or booleans.
	Params map[string]any
	// Subject is the viewer's session subject: a session-bound id, 10 minutes by default.
	Subject string
	// Public makes an id with no session check (plain pages, CMS embeds), 30 days by default.
	Public bool
	// TTL overrides the lifetime; whole seconds count.
	TTL time.Duration
	// Range is the range key the chart opens with, one of the definition's ranges.
	Range string
	// Audience lists the origins (scheme, host and port) whose pages may show the chart.
	Audience []string
	// Now is the issue time; the zero value means time.Now().
	Now time.Time
}

// MintQueryID returns a signed query id (a compact JWT, HS256) for a query of the edge's
// registry. kid and secret are one entry of EDGE_SIGNING_KEYS (`kid:secret`); the HMAC key is
// the secret's UTF-8 text exactly as written there, never its base64url-decoded bytes.
func MintQueryID(kid, secret, query string, o Options) (string, error) {
	if o.Public == (o.Subject != "") {
		return "", errors.New("queryid: an id is either public or bound to a session subject")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = 10 * time.Minute
		if o.Public {
			ttl = 30 * 24 * time.Hour
		}
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	issued := now.Unix()
	claims := map[string]any{
		"q":   query,
		"iat": issued,
		"exp": issued + int64(ttl/time.Second),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	}
	if len(o.Params) > 0 {
		claims["p"] = o.Params
	}
	if o.Public {
		claims["pub"] = true
	} else {
		claims["sub"] = o.Subject
	}
	if o.Range != "" {
		claims["r"] = o.Range
	}
	if len(o.Audience) > 0 {
		claims["aud"] = o.Audience
	}
	header, err := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT", "kid": kid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return Sign(header, payload, secret), nil
}

// Sign returns the compact JWS of a header and a payload JSON text: each base64url without
// padding, then HMAC-SHA256 of `header.payload` keyed with the secret's UTF-8 bytes.
func Sign(header, payload []byte, secret string) string {
	input := base64.RawURLEncoding.EncodeToString(header) + "." +
		base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
