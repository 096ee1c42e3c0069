package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// ProcessInfo describes one replica process for the admin endpoint.
type ProcessInfo struct {
	ID        uint64 `json:"id"`
	PID       int    `json:"pid"`
	Running   bool   `json:"running"`
	DataDir   string `json:"data_dir"`
	Log       string `json:"log"`
	DebugAddr string `json:"debug_addr"`
}

// AdminHandler lets a person or a fault injector stop, kill and restart
// replicas of a running local cluster:
//
//	GET  /replicas               the processes, as JSON
//	POST /replicas/{id}/kill     SIGKILL (a crash: the disk keeps what was synced)
//	POST /replicas/{id}/stop     SIGTERM, then SIGKILL after 5 s
//	POST /replicas/{id}/restart  start a stopped replica again on its data dir
//	POST /replicas/{id}/pause    SIGSTOP (frozen, sockets kept open)
//	POST /replicas/{id}/resume   SIGCONT
//
// Links are faulted on each replica itself, at /faults on its debug
// address (see transport.Faults.Handler).
func (ps *Processes) AdminHandler(ctx context.Context) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /replicas", func(w http.ResponseWriter, _ *http.Request) {
		var infos []ProcessInfo
		for _, p := range ps.List() {
			infos = append(infos, ProcessInfo{ID: p.ID, PID: p.Cmd.Process.Pid, Running: p.Running(),
				DataDir: p.DataDir, Log: p.Log, DebugAddr: p.DebugAddr})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(infos)
	})
	mux.HandleFunc("POST /replicas/{id}/{action}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		p := ps.Proc(id)
		if err != nil || p == nil {
			http.Error(w, fmt.Sprintf("no replica %q", r.PathValue("id")), http.StatusNotFound)
			return
		}
		switch r.PathValue("action") {
		case "kill":
			p.Kill()
		case "stop":
			p.Stop()
		case "restart":
			err = ps.Restart(ctx, id)
		case "pause":
			err = p.Pause()
		case "resume":
			err = p.Resume()
		default:
			http.Error(w, "action is kill, stop, restart, pause or resume", http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		fmt.Fprintf(w, "replica %d: %s done\n", id, r.PathValue("action"))
	})
	return mux
}
