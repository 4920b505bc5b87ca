package views

import "context"

// LoginView is the login page.
type LoginView struct {
	Next    string // the page to go on to (a path on this server)
	Message string // why the last attempt was refused
}

type logoutKey struct{}

// WithLogout marks a request as logged in: its pages offer to log out.
func WithLogout(ctx context.Context) context.Context {
	return context.WithValue(ctx, logoutKey{}, true)
}

// loggedIn reports whether the page is drawn for a logged-in request.
func loggedIn(ctx context.Context) bool { v, _ := ctx.Value(logoutKey{}).(bool); return v }

// Elsewhere says why piweb does not change a session that lives on
// machine (a team server's copy), and what to do instead.
func Elsewhere(machine string) string {
	return "This session lives on " + machine + ": piweb here shows a copy pushed from there, and does not change it. " +
		"Label, rewind or fork it on " + machine + " (in pi, or a piweb there); to go on from here in your own pi, download it (Share… → JSONL session)."
}
