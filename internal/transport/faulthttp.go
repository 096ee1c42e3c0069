package transport

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// maxRulesBody bounds a rule set posted to the handler.
const maxRulesBody = 1 << 20

// Handler serves the rule set at one path, for fault injection at run time:
//
//	GET    the rules in force, as JSON
//	POST   replace them with the RuleSet in the body (an empty one heals)
//	DELETE heal every link
//
// Only requests from a loopback address are served: whoever can set rules
// can cut a replica off from its peers, so the endpoint must not be
// reachable from another host even when the debug address is.
func (f *Faults) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fromLoopback(r) {
			http.Error(w, "fault injection is served to loopback clients only", http.StatusForbidden)
			return
		}
		switch r.Method {
		case http.MethodGet:
		case http.MethodDelete:
			f.Clear()
		case http.MethodPost, http.MethodPut:
			var rs RuleSet
			dec := json.NewDecoder(io.LimitReader(r.Body, maxRulesBody))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rs); err != nil {
				http.Error(w, fmt.Sprintf("bad rule set: %v", err), http.StatusBadRequest)
				return
			}
			if err := f.Set(rs); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST, PUT, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(f.Rules())
	})
}

func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
