package sessions

// Update makes s its next snapshot (Next), for tests that follow one
// session in one variable and never share it.
func (s *Session) Update() (Delta, error) {
	n, d, err := s.Next()
	if n != s {
		*s = *n
	}
	return d, err
}
