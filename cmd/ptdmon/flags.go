package main

import (
	"flag"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
)

// targetFlags binds the targets given on the command line (-prefill and
// -decode, repeatable, added to the configuration's) and how they are read
// (-interval, -window), for serve and record.
func targetFlags(fs *flag.FlagSet, fl *config.Flags) {
	for _, role := range []string{string(engine.Prefill), string(engine.Decode)} {
		var values listFlag
		fs.Var(&values, role, role+" target URL or name=URL (repeatable)")
		fl.Bind(role, func(c *config.Config) { c.Targets = append(c.Targets, flagTargets(role, values)...) })
	}
	fl.Duration("interval", "interval", "scrape interval (default 1s)", func(c *config.Config) *config.Duration { return &c.Interval })
	fl.Duration("window", "window", "window W of the windowed rates (default 5s)", func(c *config.Config) *config.Duration { return &c.Window })
}

// flagTargets turns -prefill or -decode values into targets of role.
func flagTargets(role string, values []string) []config.Target {
	var out []config.Target
	for _, v := range values {
		out = append(out, config.TargetFlag(role, v))
	}
	return out
}

// modelArgs are the flags that settle B_request: given, or computed from
// the model's config.json at the run's input length.
type modelArgs struct {
	kvBytes *int64
	config  *string
	seqLen  *int
}

// modelFlags binds -kv-bytes-per-request, -model-config, -seq-len,
// -kv-dtype and -tp; tpDetail ends -tp's usage.
func modelFlags(fl *config.Flags, tpDetail string) modelArgs {
	var m modelArgs
	m.kvBytes = fl.Int64("kv-bytes-per-request", "B_request: bytes of one request's KV cache", func(c *config.Config) *int64 { return &c.KVBytesPerRequest })
	m.config = fl.String("model-config", "model's config.json, to compute B_request (with -seq-len)", func(c *config.Config) *string { return &c.Model.Config })
	m.seqLen = fl.Int("seq-len", "input length S of the test run, in tokens (e.g. 8192)", func(c *config.Config) *int { return &c.Model.SeqLen })
	fl.String("kv-dtype", "KV cache dtype: auto, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2", func(c *config.Config) *string { return &c.Model.KVDtype })
	fl.Int("tp", "tensor-parallel size of the engines"+tpDetail, func(c *config.Config) *int { return &c.Model.TP })
	return m
}

// check refuses -model-config without -seq-len.
func (m modelArgs) check() error {
	if *m.config != "" && *m.seqLen == 0 {
		return cli.Usagef("-seq-len is required with -model-config (prompt tokens per request, e.g. 8192)")
	}
	return nil
}

// kvGiven says -kv-bytes-per-request was given.
func (m modelArgs) kvGiven() bool { return *m.kvBytes != 0 }
