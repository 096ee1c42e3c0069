package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/hybridkv/hybridkv/client"
)

// rangeKV answers every Get with nothing and keeps the request it made.
type rangeKV struct {
	clientv3.KV
	gets chan clientv3.Op
}

func (kv *rangeKV) Get(_ context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	kv.gets <- clientv3.OpGet(key, opts...)
	return &clientv3.GetResponse{}, nil
}

// TestEtcdScan: over etcd's API a scan is a Range of the scan's range_end
// and limit, serializable when weak.
func TestEtcdScan(t *testing.T) {
	kv := &rangeKV{gets: make(chan clientv3.Op, 1)}
	s := &etcdSession{c: &clientv3.Client{KV: kv}, timeout: time.Second}
	value, err := client.EncodeScan(client.TxnOp{Key: "user010", End: "user025", Limit: 15})
	require.NoError(t, err)
	for _, level := range []client.Level{client.Strong, client.Weak} {
		done := make(chan client.Result, 1)
		s.Submit(client.ScanKind, "user010", value, level, func(r client.Result) { done <- r })
		op := <-kv.gets
		r := <-done
		require.NoError(t, r.Err)
		require.True(t, r.Found)
		require.True(t, op.IsGet())
		require.Equal(t, "user010", string(op.KeyBytes()))
		require.Equal(t, "user025", string(op.RangeBytes()))
		require.Equal(t, int64(15), op.Limit())
		require.Equal(t, level == client.Weak, op.IsSerializable(), "%v", level)
	}

	done := make(chan client.Result, 1)
	s.Submit(client.ScanKind, "user010", []byte("not a scan"), client.Strong, func(r client.Result) { done <- r })
	require.ErrorIs(t, (<-done).Err, client.ErrBadScan)
}
