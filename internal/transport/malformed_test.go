package transport

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/wire"
)

func frame(m wire.Message) []byte { return wire.AppendFrame(nil, m) }

// rawFrame frames an arbitrary payload, valid or not.
func rawFrame(payload ...byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(payload))), payload...)
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestMalformedInput(t *testing.T) {
	const server = wire.NodeID(1)
	const rogue = wire.FirstClientID + 100
	hello := frame(&wire.Hello{From: rogue})
	// A frame larger than the reader's buffer whose payload is garbage.
	big := rawFrame(append([]byte{0xff}, make([]byte, 200<<10)...)...)
	tests := []struct {
		name      string
		send      []byte
		delivered int // messages the handler should see before the close
	}{
		{"text instead of frames", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0},
		{"zero length frame", []byte{0, 0, 0, 0}, 0},
		{"first frame not hello", frame(request(1)), 0},
		{"hello with bad site", rawFrame(byte(wire.TypeHello), 5, 0x80, 0x80, 0x80, 0x80, 0x10), 0},
		{"hello with trailing bytes", rawFrame(byte(wire.TypeHello), 5, 0, 0), 0},
		{"unknown type after hello", concat(hello, rawFrame(0xee, 1, 2)), 0},
		{"garbage after a good message", concat(hello, frame(request(1)), rawFrame(byte(wire.TypeRequest), 0xff)), 1},
		{"oversized garbage frame", concat(hello, big), 0},
		{"truncated hello then silence", []byte{10, 0, 0, 0, byte(wire.TypeHello)}, 0},
		{"silence", nil, 0},
	}

	var mu sync.Mutex
	fromRogue := 0
	good := newInbox()
	b := start(t, Config{Self: server, Listen: "127.0.0.1:0", HandshakeTimeout: 200 * time.Millisecond},
		func(from wire.NodeID, m wire.Message) {
			if from == rogue {
				mu.Lock()
				fromRogue++
				mu.Unlock()
				return
			}
			good.handle(from, m)
		})
	a := start(t, Config{Self: wire.FirstClientID, Peers: map[wire.NodeID]Peer{server: {Addr: b.Addr().String()}}},
		func(wire.NodeID, wire.Message) {})
	waitConnected(t, a, server)

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			fromRogue = 0
			mu.Unlock()
			nc, err := net.Dial("tcp", b.Addr().String())
			require.NoError(t, err)
			defer nc.Close()
			nc.Write(tt.send) // the server may hang up mid-write
			requireClosedByPeer(t, nc)
			mu.Lock()
			require.Equal(t, tt.delivered, fromRogue)
			mu.Unlock()

			// The server keeps serving well-behaved nodes.
			a.Send(server, request(uint64(i)))
			requireSame(t, request(uint64(i)), good.next(t).m)
		})
	}
}

// requireClosedByPeer waits for the server to close the connection, as
// opposed to leaving it open until a timeout.
func requireClosedByPeer(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(waitFor))
	buf := make([]byte, 1024)
	for {
		_, err := nc.Read(buf)
		if err == nil {
			continue
		}
		require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "server left a bad connection open")
		return
	}
}
