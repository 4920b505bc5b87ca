package auth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piweb/piweb/internal/storetest"
	"github.com/piweb/piweb/store"
)

var ctx = context.Background()

func engines(t *testing.T, test func(t *testing.T, st Table)) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			st, err := store.Open(ctx, e.DSN, store.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			test(t, Table{DB: st})
		})
	}
}

// clock is a clock the test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestTokens(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		tok, err := NewToken(ctx, st, "ann")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewToken(ctx, st, "ann"); !errors.Is(err, ErrTokenExists) {
			t.Errorf("the same name twice: %v", err)
		}
		if _, err := NewToken(ctx, st, "bad\nname"); err == nil {
			t.Error("a name with a newline was taken")
		}
		lookup, secret, ok := split(tok)
		if !ok {
			t.Fatalf("token %q does not split", tok)
		}
		rows, _ := st.Tokens(ctx)
		if len(rows) != 1 || rows[0].Lookup != lookup || strings.Contains(rows[0].Hash, secret) || !strings.HasPrefix(rows[0].Hash, "$argon2id$") {
			t.Fatalf("the store keeps %+v", rows)
		}
		c := &clock{now: time.Unix(1e9, 0)}
		g := NewGuard(st, Options{Now: c.Now})
		cookie, name, err := g.Login(ctx, "1.2.3.4", tok)
		if err != nil || name != "ann" || cookie == "" {
			t.Fatalf("login: %q %q %v", cookie, name, err)
		}
		if n, ok := g.Session(ctx, cookie); !ok || n != "ann" {
			t.Errorf("session: %q %v", n, ok)
		}
		if _, ok := g.Session(ctx, cookie+"x"); ok {
			t.Error("another cookie opens the session")
		}
		if n, err := g.Bearer(ctx, "1.2.3.4", tok); err != nil || n != "ann" {
			t.Errorf("bearer: %q %v", n, err)
		}
		for _, bad := range []string{tok[:len(tok)-1] + "A", "piweb_" + lookup + "_" + strings.Repeat("A", 43), "piweb_AAAAAAAAAAAA_" + secret, "", "Bearer " + tok, tok + "x"} {
			if bad == tok {
				continue
			}
			if _, err := g.Bearer(ctx, "5.6.7.8", bad); !errors.Is(err, ErrBadToken) {
				t.Errorf("token %q: %v", bad, err)
			}
			g.mu.Lock()
			delete(g.fails, "5.6.7.8")
			g.mu.Unlock()
		}
		// Sessions end when they expire, and when their token is revoked.
		c.now = c.now.Add(g.SessionAge())
		if _, ok := g.Session(ctx, cookie); ok {
			t.Error("an expired session is open")
		}
		cookie, _, _ = g.Login(ctx, "1.2.3.4", tok)
		if _, ok := g.Session(ctx, cookie); !ok {
			t.Fatal("a new session is not open")
		}
		if _, err := st.RevokeToken(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		if _, ok := g.Session(ctx, cookie); !ok {
			t.Error("the revocation was seen before the recheck") // the tokens are read every 10 s
		}
		c.now = c.now.Add(11 * time.Second)
		if _, ok := g.Session(ctx, cookie); ok {
			t.Error("a revoked token's session is open")
		}
		if _, err := g.Bearer(ctx, "1.2.3.4", tok); !errors.Is(err, ErrBadToken) {
			t.Errorf("a revoked bearer: %v", err)
		}
		g.Logout(cookie)
	})
}

// TestRateLimit: an address that failed five times in 15 minutes is
// refused, even with the right token, until the oldest failure is 15
// minutes old; other addresses are not; a success clears the count.
func TestRateLimit(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		tok, _ := NewToken(ctx, st, "ann")
		c := &clock{now: time.Unix(1e9, 0)}
		g := NewGuard(st, Options{Now: c.Now})
		for i := range 5 {
			if _, _, err := g.Login(ctx, "9.9.9.9", "piweb_wrong"); !errors.Is(err, ErrBadToken) {
				t.Fatalf("attempt %d: %v", i, err)
			}
			c.now = c.now.Add(time.Minute)
		}
		var tm *TooMany
		if _, _, err := g.Login(ctx, "9.9.9.9", tok); !errors.As(err, &tm) || tm.RetryAfter != 10*time.Minute {
			t.Fatalf("sixth attempt: %v", err)
		}
		if _, err := g.Bearer(ctx, "9.9.9.9", tok); !errors.As(err, &tm) {
			t.Fatalf("bearer from a refused address: %v", err)
		}
		if _, _, err := g.Login(ctx, "8.8.8.8", tok); err != nil {
			t.Errorf("another address: %v", err)
		}
		c.now = c.now.Add(10 * time.Minute)
		if _, _, err := g.Login(ctx, "9.9.9.9", tok); err != nil {
			t.Fatalf("after the wait: %v", err)
		}
		// The success cleared the count: five more failures are allowed.
		for i := range 5 {
			if _, _, err := g.Login(ctx, "9.9.9.9", "x"); !errors.Is(err, ErrBadToken) {
				t.Fatalf("attempt %d after a success: %v", i, err)
			}
		}
	})
}

// TestSameWork: a token that names no row is refused after the same
// argon2id work as a token whose secret is wrong.
func TestSameWork(t *testing.T) {
	engines(t, func(t *testing.T, st Table) {
		tok, _ := NewToken(ctx, st, "ann")
		lookup, _, _ := split(tok)
		g := NewGuard(st, Options{Failures: 100})
		dummyHash()
		var calls atomic.Int32
		var mem atomic.Uint32
		real := idKey
		idKey = func(p, s []byte, tm, m uint32, th uint8, n uint32) []byte {
			calls.Add(1)
			mem.Store(m)
			return real(p, s, tm, m, th, n)
		}
		defer func() { idKey = real }()
		for _, bad := range []string{"piweb_" + lookup + "_" + strings.Repeat("B", 43), "piweb_ZZZZZZZZZZZZ_" + strings.Repeat("B", 43), "nonsense"} {
			calls.Store(0)
			if _, err := g.Bearer(ctx, "a", bad); !errors.Is(err, ErrBadToken) {
				t.Fatal(err)
			}
			if calls.Load() != 1 || mem.Load() != argonMemory {
				t.Errorf("%q: %d argon2id runs of %d KiB", bad, calls.Load(), mem.Load())
			}
		}
	})
}

// TestSplit: tokens split by their fixed lengths, whatever '_' their
// random parts hold (base64url's alphabet has it).
func TestSplit(t *testing.T) {
	lookup, secret := "a_b_cdefghi_", "_"+strings.Repeat("x_", 21)
	l, s, ok := split(tokenPrefix + lookup + "_" + secret)
	if !ok || l != lookup || s != secret {
		t.Errorf("split into %q %q %v", l, s, ok)
	}
	for _, bad := range []string{tokenPrefix + lookup + "-" + secret, tokenPrefix + lookup + "_" + secret + "x", "x" + lookup + "_" + secret} {
		if _, _, ok := split(bad); ok {
			t.Errorf("%q splits", bad)
		}
	}
}
