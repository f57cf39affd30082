package kvsize

import "strings"

// checkRange flags a sequence longer than the model supports (R14); the
// figure is still computed because rope-scaled deployments do exceed it.
func (c *calc) checkRange() error {
	mp, ok, err := c.sec.int("max_position_embeddings")
	if err != nil {
		return err
	}
	if ok && mp > 0 && int64(c.opts.SeqLen) > mp {
		c.warn("seq_len %d exceeds %s=%d (R14): the model is not specified for this length", c.opts.SeqLen, c.sec.path("max_position_embeddings"), mp)
	}
	return nil
}

// unmodelled lists config fields that change per-layer sizes in ways this
// package does not compute; they are reported, not silently ignored.
var unmodelled = []string{"swa_num_key_value_heads", "swa_head_dim", "global_head_dim", "num_global_key_value_heads", "num_kv_shared_layers", "block_configs"}

func (c *calc) warnUnmodelled() {
	var found []string
	for _, k := range unmodelled {
		if c.sec.has(k) {
			found = append(found, c.sec.path(k))
		}
	}
	if len(found) > 0 {
		c.warn("not modelled: %s (per-layer heads or KV sharing, R6); B_request may be wrong for this model", strings.Join(found, ", "))
	}
}
