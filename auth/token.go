// Package auth is piweb's login: tokens (made by `piweb token new`, shown
// once, kept in the store only as an argon2id hash of their secret part),
// the sessions a login in the browser opens (a random cookie, kept in
// memory), and a limit on failed attempts per address.
//
// A token reads piweb_<lookup>_<secret>: the lookup names its row in the
// store, the secret is checked against the row's hash in constant time.
// A token that names no row costs as much to refuse as one whose secret is
// wrong. Checking a secret is slow on purpose (argon2id), so at most two
// run at once, and a Bearer token checked once is remembered for a minute
// (by its SHA-256: the token itself is kept nowhere).
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Store keeps the tokens: store.DB.
type Store interface {
	AddToken(ctx context.Context, t Token) error
	Tokens(ctx context.Context) ([]Token, error)
	TokenByLookup(ctx context.Context, lookup string) (Token, bool, error)
	RevokeToken(ctx context.Context, name string) (bool, error)
	TokenUsed(ctx context.Context, id, when int64) error
}

// The argon2id parameters: OWASP's first recommendation (19 MiB, two
// passes, one lane). The secret is 256 random bits, which no parameters
// need to protect against guessing: the hash only keeps a stolen store
// from being a list of tokens.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
)

const tokenPrefix = "piweb_"

var b64 = base64.RawURLEncoding

// ErrBadToken says a token is not one of the store's (or was revoked).
var ErrBadToken = errors.New("not a valid token (it may have been revoked)")

// ValidName reports whether name can name a token.
func ValidName(name string) bool {
	return name != "" && len(name) <= 100 && utf8.ValidString(name) &&
		!strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// NewToken makes a token named name in st and returns it: the only time
// it exists anywhere but with whoever it is given to.
func NewToken(ctx context.Context, st Store, name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("token name %q: use up to 100 printable characters", name)
	}
	var lookup [9]byte
	var secret [32]byte
	rand.Read(lookup[:])
	rand.Read(secret[:])
	tok := tokenPrefix + b64.EncodeToString(lookup[:]) + "_" + b64.EncodeToString(secret[:])
	t := Token{Name: name, Lookup: b64.EncodeToString(lookup[:]), Hash: hashSecret(b64.EncodeToString(secret[:])),
		Created: time.Now().UnixMilli()}
	if err := st.AddToken(ctx, t); err != nil {
		return "", err
	}
	return tok, nil
}

// split returns a token's lookup and secret parts.
func split(tok string) (lookup, secret string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(tok), tokenPrefix)
	if !ok {
		return "", "", false
	}
	// Fixed lengths: base64url's alphabet holds '_' too.
	if len(rest) != 12+1+43 || rest[12] != '_' {
		return "", "", false
	}
	return rest[:12], rest[13:], true
}

// hashSecret returns the PHC string of secret's argon2id hash, with a new salt.
func hashSecret(secret string) string {
	var salt [16]byte
	rand.Read(salt[:])
	key := idKey([]byte(secret), salt[:], argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt[:]), b64.EncodeToString(key))
}

// idKey is argon2id (tests count its calls).
var idKey = argon2.IDKey

// dummyHash is checked against when a token names no row, so that
// refusing it costs what refusing a wrong secret does.
var dummyHash = sync.OnceValue(func() string { return hashSecret("no such token") })

// checkSecret reports whether secret hashes to hash (a PHC string of
// argon2id), comparing in constant time.
func checkSecret(hash, secret string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v, m, t, p int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m <= 0 || m > 1<<21 || t <= 0 || t > 16 || p <= 0 || p > 16 {
		return false
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := idKey([]byte(secret), salt, uint32(t), uint32(m), uint8(p), uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
