package cluster

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DebugHandler serves a replica's debug address: /status (JSON),
// /metrics (Prometheus text format), /faults (the transport's fault rules,
// loopback callers only) and /debug/pprof/.
func (s *Server) DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ServerStatus{Status: s.Status(), Disk: s.Disk.Stats()})
	})
	mux.Handle("/metrics", promhttp.HandlerFor(s.Registry(), promhttp.HandlerOpts{}))
	mux.Handle("/faults", s.Transport().Faults().Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
