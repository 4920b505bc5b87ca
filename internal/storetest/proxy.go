package storetest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy stands between a store and its PostgreSQL server, so a test can
// take the server away (Stop: connections refused, open ones cut, as when
// it is down or restarts) and bring it back (Start), or hold every byte
// (Hold: a server that answers nothing) and let them through (Release).
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	held  chan struct{} // closed while bytes flow
}

// NewProxy starts a proxy to the server of dsn and returns it with the DSN
// that reaches the server through it.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, target: u.Host, conns: map[net.Conn]bool{}, held: make(chan struct{})}
	close(p.held)
	p.listen("127.0.0.1:0")
	u.Host = p.addr
	t.Cleanup(p.Stop)
	return p, u.String()
}

func (p *Proxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
}

func (p *Proxy) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.mu.Lock()
				held := p.held
				p.mu.Unlock()
				<-held
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		dst.Close()
		src.Close()
	}
	go pipe(s, c)
	go pipe(c, s)
}

// Stop refuses new connections and cuts the open ones.
func (p *Proxy) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Start takes connections again, on the same address.
func (p *Proxy) Start() { p.listen(p.addr) }

// Hold stops every byte where it is, connections left open: a server that
// does not answer.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = make(chan struct{})
}

// Release lets the held bytes through.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.held:
	default:
		close(p.held)
	}
}
