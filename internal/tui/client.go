package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
)

// Client reads a running ptdmon's API.
type Client struct {
	Base string // e.g. http://127.0.0.1:9433
	HTTP *http.Client
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Base, "/")+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		// net/http's error repeats the method and URL: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", req.URL.Redacted(), resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	return nil
}

// Snapshot fetches /api/v1/snapshot.
func (c *Client) Snapshot(ctx context.Context) (*Snapshot, error) {
	var s Snapshot
	if err := c.get(ctx, "/api/v1/snapshot", &s); err != nil {
		return &s, err
	}
	return &s, nil
}

// History fetches the stage-level points newer than since.
func (c *Client) History(ctx context.Context, since time.Time) ([]Tick, error) {
	var s api.Series
	path := "/api/v1/series?instances=0"
	if !since.IsZero() {
		path += fmt.Sprintf("&since=%d", since.UnixMilli())
	}
	if err := c.get(ctx, path, &s); err != nil {
		return nil, err
	}
	return markVerdicts(s.Points, s.Verdicts), nil
}

// redacted is base with any password replaced, for messages.
func redacted(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	return u.Redacted()
}

// BaseURL accepts what people type for a running ptdmon — a URL, or
// host:port as printed by `serve -listen` — and returns the URL to use.
func BaseURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("want http://host:port or host:port: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q has no host: want http://host:port or host:port", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}
