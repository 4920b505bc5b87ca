package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// Options tune a Guard; the zero value gives the defaults.
type Options struct {
	// SessionAge is how long a login in the browser lasts (default 7 days).
	SessionAge time.Duration
	// Recheck is how often the tokens in the store are looked at again,
	// so a revoked token's sessions end (default 10 s).
	Recheck time.Duration
	// Failures failed attempts from one address within Window are
	// allowed; more are refused until the oldest leaves the window
	// (defaults 5 and 15 min).
	Failures int
	Window   time.Duration
	// Now is the clock (tests move it).
	Now func() time.Time
}

// Guard checks logins: tokens typed into the login page, the sessions
// they open, and Bearer tokens. It is safe for concurrent use.
type Guard struct {
	st  Store
	opt Options

	checks chan struct{} // at most two secrets checked at once

	mu       sync.Mutex
	sessions map[[32]byte]session  // by the SHA-256 of the cookie
	bearers  map[[32]byte]verified // by the SHA-256 of the token: checked lately
	live     map[int64]bool        // the tokens in the store, as last read
	liveAt   time.Time             // when it was read
	fails    map[string][]time.Time
}

// session is a login in the browser.
type session struct {
	token   int64
	name    string
	expires time.Time
}

// verified is a Bearer token checked lately.
type verified struct {
	token int64
	name  string
	until time.Time
}

// TooMany refuses an address that failed too often: try again after RetryAfter.
type TooMany struct{ RetryAfter time.Duration }

func (e *TooMany) Error() string {
	return fmt.Sprintf("too many failed logins from this address: try again in %s", e.RetryAfter.Round(time.Second))
}

// NewGuard returns a Guard of st's tokens.
func NewGuard(st Store, opt Options) *Guard {
	if opt.SessionAge <= 0 {
		opt.SessionAge = 7 * 24 * time.Hour
	}
	if opt.Recheck <= 0 {
		opt.Recheck = 10 * time.Second
	}
	if opt.Failures <= 0 {
		opt.Failures = 5
	}
	if opt.Window <= 0 {
		opt.Window = 15 * time.Minute
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Guard{st: st, opt: opt, checks: make(chan struct{}, 2), sessions: map[[32]byte]session{},
		bearers: map[[32]byte]verified{}, fails: map[string][]time.Time{}}
}

// SessionAge is how long a session lasts: the cookie's Max-Age.
func (g *Guard) SessionAge() time.Duration { return g.opt.SessionAge }

// Login checks a token typed into the login page from addr and opens a
// session: it returns the cookie's value and the token's name. A wrong
// token is ErrBadToken; an address that failed too often is *TooMany
// (the token is not even looked at).
func (g *Guard) Login(ctx context.Context, addr, tok string) (cookie, name string, err error) {
	t, err := g.check(ctx, addr, tok)
	if err != nil {
		return "", "", err
	}
	var raw [32]byte
	rand.Read(raw[:])
	cookie = b64.EncodeToString(raw[:])
	g.mu.Lock()
	if len(g.sessions) > 10000 {
		for k, s := range g.sessions {
			if !g.opt.Now().Before(s.expires) {
				delete(g.sessions, k)
			}
		}
	}
	g.sessions[sha256.Sum256([]byte(cookie))] = session{token: t.ID, name: t.Name, expires: g.opt.Now().Add(g.opt.SessionAge)}
	g.mu.Unlock()
	g.st.TokenUsed(ctx, t.ID, g.opt.Now().UnixMilli()) // for `piweb token list`; a failure changes nothing
	return cookie, t.Name, nil
}

// Session returns the name of the token that opened the session of
// cookie, and whether it is open: not expired, not logged out, its token
// not revoked.
func (g *Guard) Session(ctx context.Context, cookie string) (string, bool) {
	if cookie == "" {
		return "", false
	}
	k := sha256.Sum256([]byte(cookie))
	g.mu.Lock()
	s, ok := g.sessions[k]
	if ok && !g.opt.Now().Before(s.expires) {
		delete(g.sessions, k)
		ok = false
	}
	g.mu.Unlock()
	if !ok || !g.alive(ctx, s.token) {
		return "", false
	}
	return s.name, true
}

// Logout ends the session of cookie.
func (g *Guard) Logout(cookie string) {
	g.mu.Lock()
	delete(g.sessions, sha256.Sum256([]byte(cookie)))
	g.mu.Unlock()
}

// Bearer checks a token sent with a request from addr (Authorization:
// Bearer) and returns its name; errors as Login's.
func (g *Guard) Bearer(ctx context.Context, addr, tok string) (string, error) {
	k := sha256.Sum256([]byte(tok))
	g.mu.Lock()
	v, ok := g.bearers[k]
	if ok && !g.opt.Now().Before(v.until) {
		delete(g.bearers, k)
		ok = false
	}
	g.mu.Unlock()
	if ok && g.alive(ctx, v.token) {
		return v.name, nil
	}
	t, err := g.check(ctx, addr, tok)
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	if len(g.bearers) > 10000 {
		clear(g.bearers)
	}
	g.bearers[k] = verified{token: t.ID, name: t.Name, until: g.opt.Now().Add(time.Minute)}
	g.mu.Unlock()
	return t.Name, nil
}

// check checks tok from addr against the store, counting a failure
// against addr.
func (g *Guard) check(ctx context.Context, addr, tok string) (t tokenRow, err error) {
	if wait := g.limited(addr); wait > 0 {
		return t, &TooMany{RetryAfter: wait}
	}
	lookup, secret, ok := split(tok)
	var row tokenRow
	found := false
	if ok {
		r, f, err := g.st.TokenByLookup(ctx, lookup)
		if err != nil {
			return t, err
		}
		row, found = tokenRow{ID: r.ID, Name: r.Name, hash: r.Hash}, f
	}
	hash := row.hash
	if !found {
		hash, secret = dummyHash(), "x" // the same work, and never a match
	}
	select {
	case g.checks <- struct{}{}:
	case <-ctx.Done():
		return t, ctx.Err()
	}
	good := checkSecret(hash, secret)
	<-g.checks
	if !found || !good {
		g.failed(addr)
		return t, ErrBadToken
	}
	g.mu.Lock()
	delete(g.fails, addr)
	if g.live != nil {
		g.live[row.ID] = true
	}
	g.mu.Unlock()
	return row, nil
}

// tokenRow is a token's row as check needs it.
type tokenRow struct {
	ID   int64
	Name string
	hash string
}

// limited returns how long addr must wait before it may try again (0: it may now).
func (g *Guard) limited(addr string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.opt.Now()
	recent := g.recentLocked(addr, now)
	if len(recent) < g.opt.Failures {
		return 0
	}
	return recent[len(recent)-g.opt.Failures].Add(g.opt.Window).Sub(now)
}

// recentLocked returns addr's failures within the window (g.mu held), forgetting older ones.
func (g *Guard) recentLocked(addr string, now time.Time) []time.Time {
	f := g.fails[addr]
	k := 0
	for k < len(f) && !f[k].After(now.Add(-g.opt.Window)) {
		k++
	}
	f = f[k:]
	if len(f) == 0 {
		delete(g.fails, addr)
	} else {
		g.fails[addr] = f
	}
	return f
}

// failed counts a failed attempt from addr.
func (g *Guard) failed(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.opt.Now()
	if len(g.fails) > 10000 { // many addresses: forget those whose failures are old
		for a := range g.fails {
			g.recentLocked(a, now)
		}
	}
	f := append(g.recentLocked(addr, now), now)
	if len(f) > g.opt.Failures {
		f = f[len(f)-g.opt.Failures:]
	}
	g.fails[addr] = f
}

// alive reports whether the token with id is still in the store (not
// revoked), reading the store's tokens again every opt.Recheck. While the
// store cannot be read, what was read last holds for five minutes.
func (g *Guard) alive(ctx context.Context, id int64) bool {
	now := g.opt.Now()
	g.mu.Lock()
	fresh := g.live != nil && now.Sub(g.liveAt) < g.opt.Recheck
	ok := g.live[id]
	g.mu.Unlock()
	if fresh {
		return ok
	}
	toks, err := g.st.Tokens(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		if g.live != nil && now.Sub(g.liveAt) < 5*time.Minute {
			return g.live[id]
		}
		return false
	}
	g.live = make(map[int64]bool, len(toks))
	for _, t := range toks {
		g.live[t.ID] = true
	}
	g.liveAt = now
	return g.live[id]
}
