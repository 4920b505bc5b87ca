package sessions

// Export returns the branch to entry leafID ("" for pi's leaf) as a redacted session file to share.
func Export(s *Session, leafID string, opts Redact) ([]byte, error) {
	// The content a fork would have, under a fresh header and session id and
	// without parentSession (a local path).
	b, err := s.Branch(leafID, opts)
	if err != nil {
		return nil, err
	}
	return b.JSONL(), nil
}
