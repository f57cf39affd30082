package api

import (
	"net"
	"net/http"
	"strings"
)

// AllowHosts answers only requests whose Host header is one of hosts (a
// host matches any port; host:port only that port), so a web page that
// rebinds its own DNS name to 127.0.0.1 cannot read the API through a
// browser on the same machine. No hosts: every request is answered.
func AllowHosts(hosts []string, h http.Handler) http.Handler {
	if len(hosts) == 0 {
		return h
	}
	allowed := make(map[string]bool, len(hosts))
	for _, v := range hosts {
		allowed[strings.ToLower(strings.TrimSpace(v))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		name := host
		if n, _, err := net.SplitHostPort(host); err == nil {
			name = n
		}
		if !allowed[host] && !allowed[name] && !allowed[strings.Trim(name, "[]")] {
			http.Error(w, "host not allowed (see allowed_hosts)", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}
