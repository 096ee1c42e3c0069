package client

import (
	"context"
	"time"

	"github.com/hybridkv/hybridkv/internal/wire"
)

// Session is one logical client: a sequence of operations with identities.
// Its methods are safe for concurrent use; concurrent operations of one
// session are pipelined and count as concurrent in its session order.
type Session struct {
	c  *Client
	id uint64
}

// ID returns the session's identity.
func (s *Session) ID() uint64 { return s.id }

// Submit starts an operation and returns at once; done is called exactly
// once with the outcome, on the client's event loop goroutine, so it must not
// block (it may Submit again, but must not Close the client). On a closed
// client done runs with ErrClosed before Submit returns, on the caller's
// goroutine: a done that submits again must stop doing so on ErrClosed (or
// hold no lock it takes itself), or it recurses. The value is
// sent as it is: the caller must not modify it until done runs.
func (s *Session) Submit(kind Kind, key string, value []byte, level Level, done func(Result)) {
	if err := checkOp(kind, key, value, level); err != nil {
		done(Result{Err: err})
		return
	}
	c := &call{session: s.id, op: wire.Op{Kind: kind, Key: key, Value: value, Level: level},
		start: time.Now(), done: done}
	if err := s.c.loop.submit(c); err != nil {
		done(Result{Err: err})
	}
}

// Do runs one operation and waits for it. If ctx ends first the operation is
// abandoned: it may or may not take effect.
func (s *Session) Do(ctx context.Context, kind Kind, key string, value []byte, level Level) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := checkOp(kind, key, value, level); err != nil {
		return Result{}, err
	}
	ch := make(chan Result, 1)
	c := &call{session: s.id, op: wire.Op{Kind: kind, Key: key, Value: value, Level: level},
		start: time.Now(), done: func(r Result) { ch <- r }}
	if err := s.c.loop.submit(c); err != nil {
		return Result{}, err
	}
	select {
	case r := <-ch:
		return r, r.Err
	case <-ctx.Done():
		s.c.loop.cancel(c)
		return Result{}, ctx.Err()
	}
}

// Put writes value under key.
func (s *Session) Put(ctx context.Context, key string, value []byte, level Level) error {
	_, err := s.Do(ctx, Put, key, value, level)
	return err
}

// Delete removes key; deleting a key that is not there is no error. At
// either level it is a write like Put: the key is then absent.
func (s *Session) Delete(ctx context.Context, key string, level Level) error {
	_, err := s.Do(ctx, Delete, key, nil, level)
	return err
}

// Get reads key; found is false when the key was never written, or was
// deleted since.
func (s *Session) Get(ctx context.Context, key string, level Level) (value []byte, found bool, err error) {
	r, err := s.Do(ctx, Get, key, nil, level)
	return r.Value, r.Found, err
}
