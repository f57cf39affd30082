package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/inspect"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

func init() {
	register("inspect", "parse one /metrics (file or URL) and print what ptdmon reads from it", runInspect)
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	c := cli.New("inspect", "[flags] FILE|URL",
		"Parses one exposition and prints the detected engine, the family-name prefix it matched and\n"+
			"the role, every canonical value read, and how many families were ignored and why. -json\n"+
			"prints everything, buckets included.",
		cli.OneArg, stdout, stderr)
	fs := c.Flags
	engines, sources := engine.EngineChoices(), engine.KVSourceChoices()
	eng := fs.String("engine", "auto", "engine: "+engines)
	role := fs.String("role", "", "role: prefill, decode or router (default: from the exposition)")
	kvSource := fs.String("kv-source", "", "KV byte source: "+sources)
	contentType := fs.String("content-type", "", "Content-Type of a file (default: text format 0.0.4)")
	timeout := fs.Duration("timeout", 10*time.Second, "timeout for a URL")
	asJSON := fs.Bool("json", false, "print the full description as JSON")
	return c.Run(args, func(pos []string) error {
		e, ok := engine.ParseEngine(*eng)
		if !ok {
			return cli.Usagef("-engine %q: want %s", *eng, engines)
		}
		var r engine.Role
		if *role != "" {
			if r, ok = engine.ParseRole(*role); !ok {
				return cli.Usagef("-role %q: want prefill, decode or router", *role)
			}
		}
		kv, ok := engine.ParseKVSource(*kvSource)
		if !ok {
			return cli.Usagef("-kv-source %q: want %s", *kvSource, sources)
		}
		src := pos[0]
		shown := src // a URL's password never reaches the output
		if isURL(src) {
			shown = scrape.Redact(src)
		}
		body, ct, err := load(src, shown, *contentType, *timeout)
		if err != nil {
			return err
		}
		rd := engine.NewReader(e, r, kv)
		rd.Explain()
		obs, err := rd.Read(body, ct)
		if err != nil {
			return cli.Usage(fmt.Errorf("%s: %w", shown, err))
		}
		found, err := engine.Detect(body, ct)
		if err != nil {
			return cli.Usage(fmt.Errorf("%s: %w", shown, err))
		}
		in := inspect.Of(shown, obs, found)
		if !*asJSON {
			return in.WriteSummary(stdout)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	})
}

// load reads a file (a missing one is a usage error), or fetches a URL the
// way the collector does (a failure is a runtime error).
func load(src, shown, contentType string, timeout time.Duration) ([]byte, string, error) {
	if isURL(src) {
		f := &scrape.Fetcher{URL: src, Client: scrape.NewClient(1), Timeout: timeout}
		res, err := f.Fetch(context.Background())
		if err != nil {
			// net/http's error repeats the method and URL the fetcher
			// already names: keep only its cause.
			var ue *url.Error
			if errors.As(err, &ue) {
				return nil, "", fmt.Errorf("GET %s: %w", shown, ue.Err)
			}
			return nil, "", err
		}
		if contentType == "" {
			contentType = res.ContentType
		}
		return res.Body, contentType, nil
	}
	if err := checkRegularFile("", src); err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, "", err
	}
	return b, contentType, nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }
