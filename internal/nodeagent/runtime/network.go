package runtime

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// synTimeout is how long a connect whose packets are dropped waits before
// Linux gives up (its SYN retries).
const synTimeout = 127 * time.Second

// holdDropped bounds how long a refused incoming connection is held
// (read and ignored) before it is closed.
const holdDropped = 2 * time.Minute

// podAddr is the container's pod IP, when it has one.
func (p *process) podAddr() (netip.Addr, bool) {
	a, err := netip.ParseAddr(p.spec.IP)
	return a, err == nil
}

// dialer is the dialer of the container's connections to dst: from its
// pod IP on loopback, as a pod's connections come from its address.
func (p *process) dialer(network string, dst netip.Addr) *net.Dialer {
	d := &net.Dialer{}
	if src, ok := p.podAddr(); ok && src.IsLoopback() && dst.IsLoopback() {
		if strings.HasPrefix(network, "udp") {
			d.LocalAddr = &net.UDPAddr{IP: src.AsSlice()}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		}
	}
	return d
}

// allowed asks the network plugin whether the container may connect to
// dst:port.
func (p *process) allowed(ctx context.Context, network string, dst netip.Addr, port string) bool {
	src, ok := p.podAddr()
	if p.network == nil || !ok {
		return true
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return true
	}
	proto := "TCP"
	if strings.HasPrefix(network, "udp") {
		proto = "UDP"
	}
	return p.network.Allowed(ctx, src, dst, int32(n), proto)
}

// dropped waits as a connect whose packets a policy drops does: until
// the caller gives up (an i/o timeout) or the SYN retries run out
// ("connection timed out").
func dropped(ctx context.Context, network string, dst netip.Addr, port string) error {
	addr, _ := net.ResolveTCPAddr("tcp", net.JoinHostPort(dst.String(), port))
	t := time.NewTimer(synTimeout)
	defer t.Stop()
	err := error(syscall.ETIMEDOUT)
	select {
	case <-ctx.Done():
		err = os.ErrDeadlineExceeded
	case <-t.C:
	}
	return &net.OpError{Op: "dial", Net: network, Addr: addr, Err: err}
}

// listenTCP binds a port on the pod's IP; with a network plugin, the
// connections its policies refuse are held unanswered, as dropped
// packets would leave them, and never reach the server.
func (p *process) listenTCP(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(p.spec.IP, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	dst, ok := p.podAddr()
	if p.network == nil || !ok {
		return ln, nil
	}
	return &policedListener{Listener: ln, allow: func(src netip.Addr) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return p.network.Allowed(ctx, src, dst, int32(port), "TCP")
	}}, nil
}

// policedListener hands on only the connections allow lets in.
type policedListener struct {
	net.Listener
	allow func(src netip.Addr) bool
}

// Accept returns the next connection let in; the others are held and
// then closed.
func (l *policedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil || l.allow(src.Addr().Unmap()) {
			return c, nil
		}
		go func() {
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(holdDropped))
			_, _ = io.Copy(io.Discard, c)
		}()
	}
}
