#!/usr/bin/env python3
"""Forward-pass metrics as vLLM and SGLang put them on the wire, made with
Python's msgpack and libzmq (pyzmq), not with the Go code under test.

The field order and defaults follow the engines' msgspec Structs (a Struct
encodes as a msgpack map of every field, in declaration order):
  vLLM   vllm/v1/metrics/forward_pass_metrics.py @ 17b07c040e3c491d79eff808edfa5321c7c1cbe7
         https://github.com/vllm-project/vllm/pull/52061
  SGLang python/sglang/srt/observability/forward_pass_metrics.py @ 48ccb9a4b9e8864b6d8e69363b2094e36b7e204f

  fpm.py fixtures DIR            writes the *.msgpack fixtures
  fpm.py publish PORT N SECONDS  binds an XPUB socket (a PUB that hears
                                 subscriptions) on 127.0.0.1:PORT (0: any,
                                 printed) and, once a subscriber has joined,
                                 sends N passes of SECONDS each as vLLM does
                                 (frames: topic b"", 8-byte sequence, payload),
                                 then one heartbeat; exits at end of stdin
"""
import sys

import msgpack


def scheduled(**kw):
    d = {"num_prefill_requests": 0, "sum_prefill_tokens": 0, "var_prefill_length": 0.0,
         "sum_prefill_kv_tokens": 0, "num_decode_requests": 0, "sum_decode_kv_tokens": 0,
         "var_decode_kv_tokens": 0.0}
    d.update(kw)
    return d


def queued(**kw):
    d = {"num_prefill_requests": 0, "sum_prefill_tokens": 0, "var_prefill_length": 0.0,
         "num_decode_requests": 0, "sum_decode_kv_tokens": 0, "var_decode_kv_tokens": 0.0}
    d.update(kw)
    return d


def vllm(version=1, counter_id=0, wall_time=0.0, s=None, q=None):
    return {"version": version, "worker_id": "decode-0", "dp_rank": 1, "counter_id": counter_id,
            "timing_scope": "execute_model_cuda", "wall_time": wall_time,
            "scheduled_requests": s or scheduled(), "queued_requests": q or queued()}


def sglang(wall_time=0.0, s=None, q=None):
    return {"worker_id": "endpoint-42", "dp_rank": 2, "wall_time": wall_time,
            "scheduled_requests": s or scheduled(), "queued_requests": q or queued()}


def fixtures(out):
    cases = {
        "vllm_pass": vllm(counter_id=41, wall_time=0.0231,
                          s=scheduled(num_prefill_requests=2, sum_prefill_tokens=4096, var_prefill_length=1024.0,
                                      sum_prefill_kv_tokens=512, num_decode_requests=30, sum_decode_kv_tokens=61440),
                          q=queued(num_prefill_requests=1, sum_prefill_tokens=2048, num_decode_requests=3)),
        "vllm_heartbeat": vllm(counter_id=42),
        "vllm_version2": vllm(version=2, counter_id=43, wall_time=0.01),
        "sglang_pass": sglang(wall_time=0.0172, s=scheduled(num_decode_requests=64, sum_decode_kv_tokens=131072)),
    }
    for name, msg in cases.items():
        with open(f"{out}/{name}.msgpack", "wb") as f:
            f.write(msgpack.packb(msg, use_bin_type=True))


def publish(port, n, seconds):
    import zmq
    pub = zmq.Context.instance().socket(zmq.XPUB)
    if port == 0:
        port = pub.bind_to_random_port("tcp://127.0.0.1")
    else:
        pub.bind(f"tcp://127.0.0.1:{port}")
    print(port, flush=True)
    pub.recv()  # a subscription: what is sent from now on reaches it
    for i in range(n + 1):
        wall = seconds if i < n else 0.0
        payload = msgpack.packb(vllm(counter_id=i, wall_time=wall, s=scheduled(num_decode_requests=8 if i < n else 0)),
                                use_bin_type=True)
        pub.send_multipart([b"", i.to_bytes(8, "big"), payload])
    sys.stdin.read()  # the subscriber has read them
    pub.close(linger=0)


if __name__ == "__main__":
    if sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    else:
        publish(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
