package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

func init() {
	register("kvbytes", "bytes of one request's KV cache from a model's config.json", runKVBytes)
}

func runKVBytes(args []string, stdout, stderr io.Writer) int {
	c := cli.New("kvbytes", "-seq-len N [flags] config.json (or -model-config config.json)",
		"Prints B_request, the bytes of one request's KV cache, with the rules and defaults used;\n"+
			"each rule tag (R3, R8, ...) is explained in docs/kvbytes.md.", cli.Args{Min: 0, Max: 1}, stdout, stderr)
	set := c.Flags
	var (
		path   = set.String("model-config", "", "the model's Hugging Face `config.json` (or give it as the argument)")
		opts   kvsize.Options
		asJSON = set.Bool("json", false, "print the full result as JSON")
	)
	set.IntVar(&opts.SeqLen, "seq-len", 0, "prompt tokens per request, S (required, e.g. 8192 or 16384)")
	set.StringVar(&opts.KVDtype, "kv-dtype", "auto", "KV cache dtype: auto|bf16|fp16|fp8|fp8_e4m3|fp8_e5m2 (auto = the config's torch_dtype)")
	set.IntVar(&opts.TP, "tp", 1, "tensor-parallel size of the decode side")
	set.BoolVar(&opts.DPAttention, "dp-attention", false, "DP attention is on (attention TP 1, no KV replication)")
	set.StringVar(&opts.WindowMode, "window-mode", kvsize.WindowModeWindow, "window: sliding/chunked layers move only their window; full: every layer moves all S tokens")
	set.BoolVar(&opts.MTP, "mtp", false, "MTP speculative decoding is on: count the num_nextn_predict_layers draft layers")
	set.StringVar(&opts.SSMDtype, "ssm-dtype", "auto", "recurrent-state dtype of linear-attention layers: auto|bf16|fp16|fp32")
	return c.Run(args, func(pos []string) error {
		switch {
		case len(pos) == 1 && *path != "" && pos[0] != *path:
			return cli.Usagef("two configs: %s and -model-config %s; give one", pos[0], *path)
		case len(pos) == 1:
			*path = pos[0]
		case *path == "":
			return cli.Usagef("missing the model's config.json (an argument, or -model-config)")
		}
		if opts.SeqLen == 0 {
			return cli.Usagef("-seq-len is required (prompt tokens per request, e.g. 8192)")
		}
		if err := checkRegularFile("-model-config", *path); err != nil {
			return err
		}
		res, err := kvsize.FromFile(*path, opts)
		if err != nil {
			if errors.Is(err, kvsize.ErrInvalid) || errors.Is(err, fs.ErrNotExist) {
				return cli.Usage(err)
			}
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(res)
		} else {
			_, err = io.WriteString(stdout, kvsize.Report(*path, res))
		}
		if err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
}

// checkRegularFile turns the two mistakes people make when naming a file —
// it does not exist, it is a directory — into usage errors naming the flag.
// flagName may be empty for a positional argument.
func checkRegularFile(flagName, path string) error {
	what := strings.TrimSpace(flagName + " " + path)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cli.Usagef("%s: no such file", what)
	case err != nil:
		return err
	case st.IsDir():
		return cli.Usagef("%s: is a directory, want a file", what)
	}
	return nil
}
