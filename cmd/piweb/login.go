package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/store"
)

// loginGuard decides whether the site needs a login and returns its
// guard (nil: none). A team server always does, and so does a piweb
// reached from other machines (bound beyond loopback, or behind a public
// URL); --no-login is taken only on a loopback address.
func loginGuard(ctx context.Context, out io.Writer, cfg config, bound string, st *site) (*auth.Guard, error) {
	local := loopback(bound)
	if cfg.noLogin {
		if !local {
			return nil, usageError{fmt.Sprintf("--no-login: %s is reachable from other machines; piweb serves without a login only on a loopback address (--addr 127.0.0.1:PORT)", bound)}
		}
		if cfg.from != "" || cfg.publicURL != "" {
			fmt.Fprintf(out, "piweb: WARNING: no login (--no-login): whoever reaches this piweb (through %s) reads every session\n", orDefault(cfg.publicURL, "a forwarded port"))
		}
		return nil, nil
	}
	if local && cfg.from == "" && cfg.publicURL == "" {
		return nil, nil
	}
	if st.tokens == nil {
		return nil, fmt.Errorf("a login is needed here (%s), and its tokens are kept in the index store, which cannot be opened: name one with --store", why(cfg, local))
	}
	tokens := auth.Table{DB: st.tokens}
	toks, err := tokens.Tokens(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(out, "piweb: login required (%s); the tokens cannot be read yet: %v\n", why(cfg, local), err)
	case len(toks) == 0:
		fmt.Fprintf(out, "piweb: login required (%s), and there is no token yet: make one with\n    piweb token new NAME %s\n", why(cfg, local), storeFlag(cfg))
	default:
		fmt.Fprintf(out, "piweb: login required (%s): %d tokens (piweb token list %s)\n", why(cfg, local), len(toks), storeFlag(cfg))
	}
	return auth.NewGuard(tokens, auth.Options{}), nil
}

// why says why a login is required.
func why(cfg config, local bool) string {
	switch {
	case cfg.from != "":
		return "a team server"
	case !local:
		return "reachable from other machines"
	}
	return "reached at " + cfg.publicURL
}

// storeFlag is the flag that names the tokens' store to piweb token.
func storeFlag(cfg config) string {
	switch {
	case cfg.from != "":
		return "--from " + redacted(cfg.from)
	case cfg.store != "":
		return "--store " + redacted(cfg.store)
	case cfg.cacheDir != "":
		return "--cache-dir " + cfg.cacheDir
	}
	return ""
}

// redacted hides a password in a store's name.
func redacted(dsn string) string { return store.RedactDSN(dsn) }

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// tokenStore returns the store the login's tokens are in: the index
// store, unless that one is thrown away at exit (--no-cache, the demo):
// then the one piweb keeps by default (or in --cache-dir).
func tokenStore(ctx context.Context, log *slog.Logger, cfg config, st *store.DB) (*store.DB, func()) {
	if !cfg.noCache && st != nil {
		return st, func() {}
	}
	dsn, err := store.DefaultDSN()
	if cfg.cacheDir != "" {
		dsn, err = "sqlite:"+filepath.Join(cfg.cacheDir, "index.db"), nil
	}
	if err != nil {
		return nil, func() {}
	}
	ts, err := store.Open(ctx, dsn, store.Options{Logger: log})
	if err != nil {
		return nil, func() {}
	}
	return ts, func() { ts.Close() }
}
