package gen

import (
	"net"
	"net/url"
	"strings"
)

// LoopbackTargets are the targets whose URL names the loopback address
// (localhost, 127.0.0.0/8, ::1). In the containers of the compose stack
// that address is the container itself, not the machine the engines run
// on: `gen compose` says so rather than copy them silently.
func LoopbackTargets(in Input) []string {
	var out []string
	for _, t := range in.Targets {
		u, err := url.Parse(t.URL)
		if err != nil {
			continue
		}
		host := strings.ToLower(u.Hostname())
		ip := net.ParseIP(host)
		if host == "localhost" || strings.HasSuffix(host, ".localhost") || ip != nil && ip.IsLoopback() {
			out = append(out, t.Name+" ("+t.URL+")")
		}
	}
	return out
}
