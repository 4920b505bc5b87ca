package sessions

import "time"

// guard bounds a wait for an event in a test: it only ends a run that
// hangs (a bug), so it is long enough never to end one that is merely
// slow (a busy machine, the race detector).
const guard = 2 * time.Minute
