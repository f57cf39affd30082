package kvsize

// tensorParallel computes what an all-ranks byte counter sees (R11): GQA heads
// are replicated when TP exceeds them, the MLA latent on every attention rank,
// and linear-attention state is sharded.
func (c *calc) tensorParallel(att attention) error {
	tp := int64(max(1, c.opts.TP))
	attnTP := tp
	if c.opts.DPAttention {
		attnTP = 1
		c.rule("DP attention: attention TP = 1 (dp = tp), so KV is not replicated across ranks (R11)")
	}
	info := TPInfo{Size: int(tp), AttentionTP: int(attnTP)}
	if att.mla {
		info.Replication = attnTP
		if attnTP > 1 {
			c.rule("MLA latent replicated on each of %d attention-TP ranks → ×%d on the wire (R11)", attnTP, attnTP)
		}
	} else {
		k := att.kvHeads
		if (attnTP > k && attnTP%k != 0) || (attnTP <= k && k%attnTP != 0) {
			return invalidf("tp: attention TP %d and num_key_value_heads %d do not divide each other", attnTP, k)
		}
		perRank := max(1, k/attnTP)
		info.KVHeads, info.KVHeadsPerRank = k, perRank
		info.Replication = attnTP * perRank / k
		if attnTP > 1 {
			c.rule("TP %d: %d KV heads → max(1, %d/%d) = %d per rank, replication R = %d×%d/%d = %d (R11)", attnTP, k, k, attnTP, perRank, attnTP, perRank, k, info.Replication)
		}
	}
	if attnTP > 1 && c.res.StateBytesPerRequest > 0 {
		c.rule("linear_attention state sharded across ranks, not replicated (R11)")
	}
	attnBytes := c.res.BytesPerRequest - c.res.StateBytesPerRequest
	wire := c.ar.add(c.ar.mul(attnBytes, info.Replication), c.res.StateBytesPerRequest)
	c.res.TP = info
	c.res.WireBytesPerRequest = wire
	c.res.PerRankBytesPerRequest = wire / attnTP
	if c.res.BytesPerRequest > 0 {
		c.res.TPWireFactor = float64(wire) / float64(c.res.BytesPerRequest)
	}
	return nil
}
