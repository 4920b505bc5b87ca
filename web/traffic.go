package web

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// maxYield is the longest Yield waits for requests to end.
const maxYield = 50 * time.Millisecond

// traffic counts the requests being served (live streams, assets and the
// index's progress aside), so that background work, the index build, lets
// them go first.
type traffic struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0
	max  time.Duration // how long Yield waits at most
}

// counted is the middleware that counts the requests traffic counts.
func (t *traffic) counted(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if liveStream(p) || strings.HasPrefix(p, "/static/") || p == "/api/index" {
			return next(c)
		}
		t.mu.Lock()
		if t.n == 0 {
			t.idle = make(chan struct{})
		}
		t.n++
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			if t.n--; t.n == 0 {
				close(t.idle)
			}
			t.mu.Unlock()
		}()
		return next(c)
	}
}

// yield returns once no counted request is being served, after t.max at
// the latest (so the work goes on under steady traffic), or when ctx is done.
func (t *traffic) yield(ctx context.Context) {
	t.mu.Lock()
	if t.n == 0 {
		t.mu.Unlock()
		return
	}
	idle := t.idle
	t.mu.Unlock()
	timer := time.NewTimer(t.max)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Yield returns once no page or API request is being served, or after
// 50 ms at the latest: background work calls it between its steps, so
// pages go first on a busy machine.
func (s *Server) Yield(ctx context.Context) { s.traffic.yield(ctx) }
