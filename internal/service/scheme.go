package service

import (
	"os"

	toolkit "github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
)

// Scheme is the scheme the server answers with under the web configuration
// file (exporter-toolkit's format): https when it configures TLS, else http.
// An unreadable file says http; Run refuses it before anything is served.
func Scheme(webConfigFile string) string {
	if webConfigFile == "" {
		return "http"
	}
	b, err := os.ReadFile(webConfigFile)
	if err != nil {
		return "http"
	}
	var c toolkit.Config
	if yaml.Unmarshal(b, &c) != nil || !c.TLSConfig.IsEnabled() {
		return "http"
	}
	return "https"
}
