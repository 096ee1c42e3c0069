package transport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// readBufferSize is the buffered reader's size: large enough that a busy
// connection needs few read syscalls, and that typical frames decode straight
// out of it without a copy.
const readBufferSize = 64 << 10

// malformedError marks input that breaks the framing or encoding, as opposed
// to a connection that merely ended.
type malformedError struct{ err error }

func (e *malformedError) Error() string { return "malformed frame: " + e.err.Error() }
func (e *malformedError) Unwrap() error { return e.err }

// frameReader reads whole frames from a connection.
type frameReader struct {
	br  *bufio.Reader
	hdr [wire.FrameHeader]byte
	// big holds frames too large for the buffered reader, reused across
	// frames up to retainCap.
	big []byte
	// size is the length of the last frame read, header included.
	size int
}

func newFrameReader(nc net.Conn) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(nc, readBufferSize)}
}

// next reads and decodes one frame.
func (r *frameReader) next() (wire.Message, error) {
	if _, err := io.ReadFull(r.br, r.hdr[:]); err != nil {
		return nil, err
	}
	n, err := wire.FrameLen(r.hdr[:])
	if err != nil {
		return nil, &malformedError{err}
	}
	r.size = wire.FrameHeader + n
	if n <= r.br.Size() {
		return r.decodeBuffered(n)
	}
	p, err := r.readBig(n)
	if err != nil {
		return nil, err
	}
	return decode(p)
}

// decodeBuffered decodes a frame in place in the reader's buffer; Decode
// copies whatever it keeps, so the buffer may be reused at once.
func (r *frameReader) decodeBuffered(n int) (wire.Message, error) {
	p, err := r.br.Peek(n)
	if err != nil {
		return nil, err
	}
	m, err := decode(p)
	r.br.Discard(n)
	return m, err
}

// readBig reads a frame larger than the reader's buffer. The buffer grows
// with the bytes that actually arrive, so a length prefix that lies costs no
// more memory than the peer really sends.
func (r *frameReader) readBig(n int) ([]byte, error) {
	b := r.big[:0]
	for len(b) < n {
		chunk := min(n-len(b), max(len(b), readBufferSize))
		b = slices.Grow(b, chunk)
		got, err := io.ReadFull(r.br, b[len(b):len(b)+chunk])
		b = b[:len(b)+got]
		if err != nil {
			return nil, err
		}
	}
	if cap(b) <= retainCap {
		r.big = b
	}
	return b, nil
}

func decode(p []byte) (wire.Message, error) {
	m, err := wire.Decode(p)
	if err != nil {
		return nil, &malformedError{err}
	}
	return m, nil
}

// hello reads the frame every connection must start with.
func (r *frameReader) hello() (*wire.Hello, error) {
	m, err := r.next()
	if err != nil {
		return nil, err
	}
	h, ok := m.(*wire.Hello)
	if !ok {
		return nil, &malformedError{fmt.Errorf("first frame is %v, want hello", m.Type())}
	}
	return h, nil
}

// readLoop delivers frames to the handler until the connection fails.
func (c *conn) readLoop(r *frameReader) error {
	for {
		m, err := r.next()
		if err != nil {
			return err
		}
		if m.Type() == wire.TypeHello {
			// Identity is fixed by the first frame; a repeat carries
			// nothing the handler could use.
			continue
		}
		if fs := c.t.faults.state(); fs != nil && fs.incoming(c.remote, c.site) {
			c.t.stats.faulted.Add(1)
			continue
		}
		c.t.stats.received.Add(1)
		c.traffic.received.Add(uint64(r.size))
		c.t.handler(c.remote, m)
	}
}
