package reconciletest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy in front of the API server, for the faults of the network between
// an operator and its API server: a partition, latency, connections cut in the middle of
// what they carry. It forwards bytes and sees nothing of them: TLS runs end to end, so the
// operator still verifies the server's certificate, and HTTP/2 carries every request of a
// client, watches included, over the connection the proxy cuts or delays.
type Proxy struct {
	listener net.Listener
	target   string // the API server's host:port

	mu          sync.Mutex
	healed      chan struct{} // closed while the network works; replaced by Partition
	conns       map[*proxied]struct{}
	latency     time.Duration
	cutEvery    time.Duration // how long a connection lives, on average, before it is cut; 0 never
	wg          sync.WaitGroup
	closed      bool
	cuts, dials atomic.Int64
}

// proxied is one client connection and its connection to the server.
type proxied struct {
	client net.Conn
	cutAt  atomic.Int64 // when, in Unix nanoseconds, its next chunk from the server is cut; 0 never

	mu     sync.Mutex
	server net.Conn // nil until it is dialled
	closed bool
}

// connect sets c's connection to the server, or closes it if c is closed already.
func (c *proxied) connect(server net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = server.Close()
		return false
	}
	c.server = server
	return true
}

func (c *proxied) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	_ = c.client.Close()
	if c.server != nil {
		_ = c.server.Close()
	}
}

// StartProxy starts a Proxy in front of the control plane's API server, stopped when the
// test ends. It forwards faithfully until told otherwise.
func (cp *ControlPlane) StartProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(cp.Config.Host)
	if err != nil {
		t.Fatalf("reconciletest: the API server's address: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	p := &Proxy{listener: l, target: u.Host, healed: make(chan struct{}), conns: map[*proxied]struct{}{}}
	close(p.healed)
	p.wg.Go(p.accept)
	t.Cleanup(p.stop)
	return p
}

// Wrap returns a copy of cfg whose requests go through the proxy. The server's
// certificate is still checked against the API server's own address.
func (p *Proxy) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host != p.target {
		panic(fmt.Sprintf("reconciletest: Proxy.Wrap: config for %q, but the proxy is in front of %q", cfg.Host, p.target))
	}
	if cfg.TLSClientConfig.ServerName == "" {
		cfg.TLSClientConfig.ServerName = u.Hostname()
	}
	u.Host = p.listener.Addr().String()
	cfg.Host = u.String()
	return cfg
}

// Partition cuts the network without a word, as a partition does: nothing a client sends
// reaches the server and nothing the server sends reaches a client, over the connections
// already open and new ones alike, which connect and then hear nothing. What was in flight
// is delivered after Heal, as TCP would retransmit it, to the connections still open.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default: // already partitioned
	}
}

// Heal ends a partition.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
}

// SetLatency delays everything a client sends by d before the server receives it, so that
// every request, however small, takes d longer to be answered. Zero ends the delay.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// CutEvery cuts each connection, open or to come, after a random time of about d (between
// half and one and a half times d), in the middle of the first chunk the server sends it
// after that: half the chunk arrives, the rest never does. The cut falls inside whatever
// the connection carried, a watch's event, a list or an answer. Zero stops the cuts.
func (p *Proxy) CutEvery(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutEvery = d
	for c := range p.conns {
		p.arm(c)
	}
}

// CutAll cuts every connection open now, as a router that restarts does.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	conns := make([]*proxied, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
		p.cuts.Add(1)
	}
}

// Cuts returns how many connections the proxy has cut.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// Connections returns how many connections clients have opened through the proxy.
func (p *Proxy) Connections() int { return int(p.dials.Load()) }

// arm sets when c is cut, if the proxy cuts. p.mu is held.
func (p *Proxy) arm(c *proxied) {
	if p.cutEvery <= 0 {
		c.cutAt.Store(0)
		return
	}
	c.cutAt.Store(time.Now().Add(p.cutEvery/2 + rand.N(p.cutEvery)).UnixNano())
}

func (p *Proxy) accept() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return // closed by stop
		}
		p.dials.Add(1)
		c := &proxied{client: conn}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = conn.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.arm(c)
		p.wg.Go(func() { p.serve(c) })
		p.mu.Unlock()
	}
}

// serve forwards c both ways until either side closes or the proxy cuts it.
func (p *Proxy) serve(c *proxied) {
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	// A partition already under way holds the connection before it reaches the server.
	if !p.await(c) {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !c.connect(server) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.toServer(c); done <- struct{}{} }()
	go func() { p.toClient(c); done <- struct{}{} }()
	<-done
	c.close()
	<-done
}

// await waits until the network works, or c is closed. It reports whether it works.
func (p *Proxy) await(c *proxied) bool {
	for {
		p.mu.Lock()
		healed, closed := p.healed, p.closed
		p.mu.Unlock()
		if closed {
			return false
		}
		select {
		case <-healed:
			return true
		case <-time.After(100 * time.Millisecond):
			// To notice a closed proxy: the client's close is seen by the next read.
		}
	}
}

// chunk is what one read from a client returned, and when it will be due at the server.
type chunk struct {
	data []byte
	due  time.Time
}

func (p *Proxy) toServer(c *proxied) {
	// A reader and a writer, so that latency delays each chunk from its arrival rather
	// than adding up: the link is slow, not narrow.
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := c.client.Read(buf)
			if n > 0 {
				p.mu.Lock()
				latency := p.latency
				p.mu.Unlock()
				chunks <- chunk{data: buf[:n], due: time.Now().Add(latency)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range chunks {
		time.Sleep(time.Until(ch.due))
		if !p.await(c) {
			break
		}
		if _, err := c.server.Write(ch.data); err != nil {
			break
		}
	}
	_ = c.server.Close()
	for range chunks { // unblock the reader, which the close ends
	}
}

func (p *Proxy) toClient(c *proxied) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			if !p.await(c) {
				return
			}
			data := buf[:n]
			if at := c.cutAt.Load(); at != 0 && time.Now().UnixNano() >= at {
				_, _ = c.client.Write(data[:n/2])
				p.cuts.Add(1)
				return
			}
			if _, err := c.client.Write(data); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stop closes the listener and every connection, and waits for their goroutines.
func (p *Proxy) stop() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*proxied, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	_ = p.listener.Close()
	for _, c := range conns {
		c.close()
	}
	p.Heal()
	p.wg.Wait()
}
