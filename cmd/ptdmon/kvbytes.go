package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

func init() {
	register("kvbytes", "bytes of one request's KV cache from a model's config.json", runKVBytes)
}

func runKVBytes(args []string, stdout, stderr io.Writer) int {
	set := flag.NewFlagSet("kvbytes", flag.ContinueOnError)
	set.SetOutput(stderr)
	var (
		path   = set.String("model-config", "", "the model's Hugging Face `config.json` (required)")
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
	set.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptdmon kvbytes -model-config config.json -seq-len N [flags]")
		fmt.Fprintln(stderr, "\nPrints B_request, the bytes of one request's KV cache, with the rules and defaults used.")
		fmt.Fprintln(stderr, "\nflags:")
		set.PrintDefaults()
	}
	if err := set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if set.NArg() > 0 {
		fmt.Fprintf(stderr, "ptdmon kvbytes: unexpected argument %q\n", set.Arg(0))
		return 2
	}
	if *path == "" {
		fmt.Fprintln(stderr, "ptdmon kvbytes: -model-config: required")
		return 2
	}
	res, err := kvsize.FromFile(*path, opts)
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon kvbytes: %v\n", err)
		if errors.Is(err, kvsize.ErrInvalid) || errors.Is(err, fs.ErrNotExist) {
			return 2
		}
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		_, err = io.WriteString(stdout, kvFormat(*path, res))
	}
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon kvbytes: writing output: %v\n", err)
		return 1
	}
	return 0
}

// kvFormat renders a Result for people: the figure first, then what it is
// made of and why, so a surprising number can be checked line by line.
func kvFormat(path string, r kvsize.Result) string {
	var b strings.Builder
	in := r.Inputs
	model := in.ModelType
	if model == "" {
		model = "unknown model_type"
	}
	if len(in.Architectures) > 0 {
		model += ", " + strings.Join(in.Architectures, ", ")
	}
	fmt.Fprintf(&b, "model config     %s (%s)\n", path, model)
	if in.ConfigSection != "" {
		fmt.Fprintf(&b, "attention from   %s\n", in.ConfigSection)
	}
	fmt.Fprintf(&b, "sequence length  %d tokens\n", in.SeqLen)
	fmt.Fprintf(&b, "kv dtype         %s → %s, %d B/element\n", in.KVDtype, in.ResolvedDtype, r.ElementBytes)
	fmt.Fprintf(&b, "window mode      %s\n", in.WindowMode)
	fmt.Fprintf(&b, "\nper-token bytes  %s\n", kvBytes(r.PerTokenBytes))
	if r.StateBytesPerRequest > 0 {
		fmt.Fprintf(&b, "fixed state      %s per request\n", kvBytes(r.StateBytesPerRequest))
	}
	fmt.Fprintf(&b, "B_request        %s\n", kvBytes(r.BytesPerRequest))

	fmt.Fprintf(&b, "\nlayers\n")
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "  %s\n", kvGroupLine(g))
	}

	fmt.Fprintf(&b, "\ntensor parallel  tp %d, attention tp %d", r.TP.Size, r.TP.AttentionTP)
	if r.TP.KVHeads > 0 {
		fmt.Fprintf(&b, ", %d KV heads → %d per rank", r.TP.KVHeads, r.TP.KVHeadsPerRank)
	}
	fmt.Fprintf(&b, ", replication R = %d\n", r.TP.Replication)
	fmt.Fprintf(&b, "TP wire factor   %.4g: a byte counter summed over all ranks sees %s per request\n", r.TPWireFactor, kvBytes(r.WireBytesPerRequest))
	fmt.Fprintf(&b, "per rank         %s per request\n", kvBytes(r.PerRankBytesPerRequest))

	kvList(&b, "rules applied", r.Rules)
	kvList(&b, "class defaults used", r.Defaults)
	if len(r.Warnings) > 0 {
		kvList(&b, "warnings", r.Warnings)
	}
	return b.String()
}

func kvGroupLine(g kvsize.LayerGroup) string {
	kind := strings.ReplaceAll(g.Type, "_", " ")
	if g.Window > 0 {
		kind += fmt.Sprintf(" (window %d)", g.Window)
	}
	if g.MTP {
		kind += " (MTP draft)"
	}
	if g.Type == kvsize.LayerLinear {
		return fmt.Sprintf("%d × %s, fixed state %s per layer → %s", g.Count, kind, kvBytes(g.StateBytes), kvBytes(g.Bytes))
	}
	return fmt.Sprintf("%d × %s, %d tokens, %s/token per layer, %s per layer → %s",
		g.Count, kind, g.TokensHeld, kvBytes(g.BytesPerToken), kvBytes(g.BytesPerLayer), kvBytes(g.Bytes))
}

func kvList(b *strings.Builder, title string, items []string) {
	fmt.Fprintf(b, "\n%s\n", title)
	if len(items) == 0 {
		fmt.Fprintf(b, "  none\n")
	}
	for _, s := range items {
		fmt.Fprintf(b, "  - %s\n", s)
	}
}

// kvBytes prints the exact count with thousands separators, and the
// binary unit next to it because people reason in GiB but compare in bytes.
func kvBytes(n int64) string {
	exact := kvThousands(n) + " B"
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%s (%.3f GiB)", exact, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%s (%.1f MiB)", exact, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%s (%.1f KiB)", exact, float64(n)/(1<<10))
	}
	return exact
}

func kvThousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
