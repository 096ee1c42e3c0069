package etcdapi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hybridkv/hybridkv/internal/tooltest"
)

// TestEtcdctl drives a real etcdctl against a gateway process of every
// protocol and checks what it prints.
func TestEtcdctl(t *testing.T) {
	bin := tooltest.Etcdctl(t)
	for _, proto := range tested {
		t.Run(proto, func(t *testing.T) {
			p := startProcesses(t, proto, 1)
			ctl := func(stdin string, args ...string) string { return etcdctl(t, bin, p.gateway, stdin, args...) }

			require.Equal(t, "OK\n", ctl("", "put", "greeting", "hello"))
			require.Equal(t, "greeting\nhello\n", ctl("", "get", "greeting", "--consistency=l"))
			require.Equal(t, "greeting\nhello\n", ctl("", "get", "greeting", "--consistency=s"))
			require.Equal(t, "hello\n", ctl("", "get", "greeting", "--print-value-only"))
			for _, kv := range [][2]string{{"app/b", "2"}, {"app/a", "1"}, {"apq", "3"}} {
				require.Equal(t, "OK\n", ctl("", "put", kv[0], kv[1]))
			}
			require.Equal(t, "app/a\n1\napp/b\n2\n", ctl("", "get", "app/", "--prefix"))
			require.Equal(t, "app/a\n\napp/b\n\n", ctl("", "get", "app/", "--prefix", "--keys-only", "--consistency=s"))
			require.Equal(t, "app/a\n1\n", ctl("", "get", "app/", "--prefix", "--limit=1"))
			require.Contains(t, ctl("", "get", "app/", "--prefix", "--count-only", "-w", "fields"), `"Count" : 2`)

			txn := "value(\"greeting\") = \"hello\"\n\nput greeting bye\nget apq\n\nput greeting nope\n\n"
			require.Equal(t, "SUCCESS\n\nOK\n\napq\n3\n", ctl(txn, "txn"))
			require.Equal(t, "FAILURE\n\nOK\n", ctl(txn, "txn"))
			require.Equal(t, "nope\n", ctl("", "get", "greeting", "--print-value-only"))

			require.Equal(t, "1\n", ctl("", "del", "greeting"))
			require.Equal(t, "0\n", ctl("", "del", "greeting"))
			require.Equal(t, "", ctl("", "get", "greeting"))
			require.Equal(t, "2\napp/a\n1\napp/b\n2\n", ctl("", "del", "app/", "--prefix", "--prev-kv"))

			status := ctl("", "endpoint", "status")
			require.Contains(t, status, p.gateway)
			require.Contains(t, status, "3.7.0-hybridkv")
			members := strings.Split(strings.TrimSpace(ctl("", "member", "list")), "\n")
			require.Len(t, members, 3)
			for i, m := range members {
				require.Contains(t, m, "replica-"+string(rune('1'+i)))
			}
		})
	}
}
