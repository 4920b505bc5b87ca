package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/piweb/piweb/auth"
	"github.com/piweb/piweb/store"
)

// tokenCmd makes, lists and revokes the tokens of a piweb's login.
func tokenCmd(ctx context.Context, out io.Writer, args []string) error {
	what := ""
	if len(args) > 0 {
		what, args = args[0], args[1:]
	}
	var name string
	if (what == "new" || what == "revoke") && len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	from := fs.String("from", "", "the team server's PostgreSQL store: `URL` postgres://USER@HOST/DB")
	dsn := fs.String("store", "", "the store of the piweb the token is for: `DSN` (default: piweb's own, sqlite:$XDG_CACHE_HOME/piweb/index.db)")
	cacheDir := fs.String("cache-dir", "", "the store of a piweb run with --cache-dir `DIR`")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: piweb token new NAME [--from URL | --store DSN | --cache-dir DIR]   make a token (shown once)\n"+
			"       piweb token list [--from URL | --store DSN | --cache-dir DIR]\n"+
			"       piweb token revoke NAME [--from URL | --store DSN | --cache-dir DIR]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, ""); help || err != nil {
		return err
	}
	if fs.NArg() > 0 || what != "list" && name == "" || what != "new" && what != "list" && what != "revoke" {
		fs.Usage()
		return usageError{"piweb token new NAME, piweb token list, or piweb token revoke NAME"}
	}
	n := 0
	for _, v := range []string{*from, *dsn, *cacheDir} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return usageError{"--from, --store and --cache-dir are alternatives: give one"}
	}
	target := *from
	switch {
	case *dsn != "":
		target = *dsn
	case *cacheDir != "":
		target = "sqlite:" + filepath.Join(*cacheDir, "index.db")
	case target == "":
		d, err := store.DefaultDSN()
		if err != nil {
			return err
		}
		target = d
	}
	if _, _, err := store.ParseDSN(target); err != nil {
		return usageError{err.Error()}
	}
	st, err := store.Open(ctx, target, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	tokens := auth.Table{DB: st}
	switch what {
	case "new":
		tok, err := auth.NewToken(ctx, tokens, name)
		if errors.Is(err, auth.ErrTokenExists) {
			return fmt.Errorf("a token named %q exists already in %s (piweb token revoke %s first)", name, st, name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(out, tok)
		fmt.Fprintf(os.Stderr, "piweb: token %q made in %s. It is shown this once: give it to its user,\n"+
			"who logs in with it at the login page (or sends it as \"Authorization: Bearer TOKEN\").\n", name, st)
		return nil
	case "revoke":
		gone, err := tokens.RevokeToken(ctx, name)
		if err != nil {
			return err
		}
		if !gone {
			return fmt.Errorf("no token named %q in %s", name, st)
		}
		fmt.Fprintf(out, "piweb: token %q revoked: its logins end within 10 seconds\n", name)
		return nil
	}
	toks, err := tokens.Tokens(ctx)
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		fmt.Fprintf(out, "No tokens in %s.\n", st)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMADE\tLAST LOGIN")
	for _, t := range toks {
		used := "never"
		if t.Used > 0 {
			used = time.UnixMilli(t.Used).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, time.UnixMilli(t.Created).Format("2006-01-02 15:04"), used)
	}
	return tw.Flush()
}
