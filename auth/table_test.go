package auth

import (
	"errors"
	"testing"
)

// TestTable: the store keeps tokens by name, finds them by their lookup,
// records their use and revokes them.
func TestTable(t *testing.T) {
	engines(t, func(t *testing.T, s Table) {
		if err := s.AddToken(ctx, Token{Name: "ann", Lookup: "l1", Hash: "h1", Created: 5}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddToken(ctx, Token{Name: "ann", Lookup: "l2", Hash: "h2"}); !errors.Is(err, ErrTokenExists) {
			t.Fatalf("same name: %v", err)
		}
		if err := s.AddToken(ctx, Token{Name: "bob", Lookup: "l3", Hash: "h3"}); err != nil {
			t.Fatal(err)
		}
		tok, ok, err := s.TokenByLookup(ctx, "l1")
		if err != nil || !ok || tok.Name != "ann" || tok.Hash != "h1" || tok.Created != 5 {
			t.Fatalf("%+v %v %v", tok, ok, err)
		}
		if err := s.TokenUsed(ctx, tok.ID, 99); err != nil {
			t.Fatal(err)
		}
		all, err := s.Tokens(ctx)
		if err != nil || len(all) != 2 || all[0].Name != "ann" || all[0].Used != 99 || all[1].Name != "bob" {
			t.Fatalf("%+v %v", all, err)
		}
		if gone, err := s.RevokeToken(ctx, "ann"); !gone || err != nil {
			t.Fatalf("revoke: %v %v", gone, err)
		}
		if gone, err := s.RevokeToken(ctx, "ann"); gone || err != nil {
			t.Fatalf("revoke twice: %v %v", gone, err)
		}
		if _, ok, _ := s.TokenByLookup(ctx, "l1"); ok {
			t.Fatal("revoked token still found")
		}
	})
}
