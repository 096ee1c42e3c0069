package bench

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/hybridkv/hybridkv/client"
	"github.com/hybridkv/hybridkv/internal/cluster"
	"github.com/hybridkv/hybridkv/internal/etcdapi"
	"github.com/hybridkv/hybridkv/internal/wire"
)

// The APIs a benchmark's sessions can speak.
const (
	// APINative: the client package, the protocol's own client.
	APINative = "native"
	// APIEtcd: etcd's own Go client, through a gateway (package etcdapi)
	// at each client site, served over that site's client, which records
	// the history as a native run's would.
	APIEtcd = "etcd"
)

// session is what a driver submits its operations through.
type session interface {
	// ID names the session's writes' values.
	ID() uint64
	Submit(kind client.Kind, key string, value []byte, level client.Level, done func(client.Result))
}

// etcdSession is one etcd client connection to a gateway: the gateway
// makes each connection a session of its own. An operation runs on a
// goroutine of its own, as many at once as the driver keeps in flight.
type etcdSession struct {
	id uint64
	c  *clientv3.Client
	// timeout bounds an operation, as the native client's does.
	timeout time.Duration
}

func (s *etcdSession) ID() uint64 { return s.id }

func (s *etcdSession) Submit(kind client.Kind, key string, value []byte, level client.Level, done func(client.Result)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		if level == client.Weak {
			ctx = metadata.AppendToOutgoingContext(ctx, etcdapi.ConsistencyMetadata, "weak")
		}
		start := time.Now()
		var res client.Result
		var err error
		switch kind {
		case client.Get:
			var resp *clientv3.GetResponse
			if resp, err = s.c.Get(ctx, key, readOptions(level)...); err == nil && len(resp.Kvs) > 0 {
				res.Found, res.Value = true, resp.Kvs[0].Value
			}
		case client.ScanKind:
			res.Found, err = s.scan(ctx, key, value, level)
		case client.Put:
			_, err = s.c.Put(ctx, key, string(value))
		case client.Delete:
			_, err = s.c.Delete(ctx, key)
		default:
			err = fmt.Errorf("bench: the etcd API runs no %v", kind)
		}
		res.Latency = time.Since(start)
		if err != nil {
			res.Err = err
		}
		done(res)
	}()
}

// readOptions are a read's options: serializable, etcd's read from the
// replica at hand, when weak.
func readOptions(level client.Level) []clientv3.OpOption {
	if level == client.Weak {
		return []clientv3.OpOption{clientv3.WithSerializable()}
	}
	return nil
}

// scan runs a scan, whose value holds its range read, as an etcd Range of
// the same range_end and limit; found reports that it ran, as a native
// scan's Result does.
func (s *etcdSession) scan(ctx context.Context, key string, value []byte, level client.Level) (found bool, err error) {
	read, ok := wire.ScanRead(&wire.Op{Kind: wire.Scan, Key: key, Value: value})
	if !ok {
		return false, client.ErrBadScan
	}
	opts := append(readOptions(level), clientv3.WithRange(read.End), clientv3.WithLimit(int64(read.Limit)))
	if read.KeysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if read.CountOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	_, err = s.c.Get(ctx, key, opts...)
	return err == nil, err
}

// etcdGateways serves etcd's API at each client site over the site's
// client, and connects each session to its site's gateway.
type etcdGateways struct {
	gateways []*cluster.Gateway
	conns    []*clientv3.Client
}

func (g *etcdGateways) start(r *run, site string, c *client.Client) (*cluster.Gateway, error) {
	gw, err := cluster.ServeGateway(r.cfg, site, c, cluster.GatewayOptions{Listen: "127.0.0.1:0"}, r.opts.Logger)
	if err != nil {
		return nil, err
	}
	g.gateways = append(g.gateways, gw)
	return gw, nil
}

func (g *etcdGateways) session(gw *cluster.Gateway, id uint64) (*etcdSession, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{gw.Addr()}, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	g.conns = append(g.conns, c)
	return &etcdSession{id: id, c: c, timeout: 10 * time.Second}, nil
}

// notes reports what each gateway served, by request and path.
func (g *etcdGateways) notes(sites []string) []string {
	var out []string
	for i, gw := range g.gateways {
		out = append(out, fmt.Sprintf("etcd gateway at %s served (latency from the gateway to the cluster and back):\n%s", sites[i], gw.Served()))
	}
	return out
}

func (g *etcdGateways) stop() {
	for _, c := range g.conns {
		c.Close()
	}
	for _, gw := range g.gateways {
		gw.Stop()
	}
	g.conns, g.gateways = nil, nil
}
