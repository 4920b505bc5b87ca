package auth

// The tokens in the store: it keeps each token's name, the public part it is
// looked up by, and a hash of its secret (package auth makes both); never
// the token itself.

import (
	"context"
	"database/sql"
	"errors"

	"github.com/piweb/piweb/store"
)

// ErrTokenExists says a token of that name exists already.
var ErrTokenExists = errors.New("a token of that name exists already")

// Table is the store's login tokens (a table of its schema's step 3).
type Table struct{ *store.DB }

// Token is a login token as the store keeps it.
type Token struct {
	ID      int64
	Name    string
	Lookup  string // the token's public part, unique
	Hash    string // the hash of its secret part, with its parameters
	Created int64  // Unix ms
	Used    int64  // the last login with it, Unix ms (0: never)
}

// AddToken stores a new token; a name in use is ErrTokenExists.
func (s Table) AddToken(ctx context.Context, t Token) error {
	if !store.ValidText(t.Name, t.Lookup, t.Hash) {
		return errors.New("a token's name must be UTF-8 without NUL")
	}
	return s.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, s.Rebind(`SELECT count(*) FROM tokens WHERE name = ?`), t.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrTokenExists
		}
		_, err := tx.ExecContext(ctx, s.Rebind(`INSERT INTO tokens (name, lookup, hash, created, used) VALUES (?, ?, ?, ?, 0)`),
			t.Name, t.Lookup, t.Hash, t.Created)
		if err != nil && store.UniqueViolation(err) {
			return ErrTokenExists // made meanwhile by another process
		}
		return err
	})
}

// Tokens returns every token, by name.
func (s Table) Tokens(ctx context.Context) ([]Token, error) {
	var out []Token
	err := s.Use(ctx, func(db *sql.DB) error {
		out = nil
		rows, err := db.QueryContext(ctx, `SELECT id, name, lookup, hash, created, used FROM tokens ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t Token
			if err := rows.Scan(&t.ID, &t.Name, &t.Lookup, &t.Hash, &t.Created, &t.Used); err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// TokenByLookup returns the token whose public part is lookup, and false
// when there is none.
func (s Table) TokenByLookup(ctx context.Context, lookup string) (Token, bool, error) {
	var t Token
	found := false
	err := s.Use(ctx, func(db *sql.DB) error {
		err := db.QueryRowContext(ctx, s.Rebind(`SELECT id, name, lookup, hash, created, used FROM tokens WHERE lookup = ?`), lookup).
			Scan(&t.ID, &t.Name, &t.Lookup, &t.Hash, &t.Created, &t.Used)
		found = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return t, found, err
}

// RevokeToken deletes the token named name, and reports whether there was one.
func (s Table) RevokeToken(ctx context.Context, name string) (bool, error) {
	var n int64
	err := s.Use(ctx, func(db *sql.DB) error {
		r, err := db.ExecContext(ctx, s.Rebind(`DELETE FROM tokens WHERE name = ?`), name)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n > 0, err
}

// TokenUsed records a login with the token of id at when (Unix ms).
func (s Table) TokenUsed(ctx context.Context, id, when int64) error {
	return s.Use(ctx, func(db *sql.DB) error {
		_, err := db.ExecContext(ctx, s.Rebind(`UPDATE tokens SET used = ? WHERE id = ?`), when, id)
		return err
	})
}
