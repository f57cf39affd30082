package gen

// ExampleConfig is the ptdmon.yaml the checked-in deploy/ tree is generated
// from: one vLLM (FlagCX) and one SGLang P/D pair, Llama-3.1-8B at S=8192 in
// bf16. Replace the targets with yours and run `ptdmon gen compose -config`.
const ExampleConfig = `# ptdmon.yaml — example deployment; replace the targets with your engines.
interval: 1s
window: 5s
# B_request: Llama-3.1-8B, bf16, S=8192 tokens:
# 32 layers x 8 KV heads x 128 head dim x 2 (K,V) x 2 bytes x 8192.
# Or compute it: ptdmon kvbytes -model-config config.json -seq-len 8192
kv_bytes_per_request: 1073741824
targets:
  - name: vllm-prefill-0
    url: http://vllm-prefill-0:8000/metrics
    role: prefill
    engine: vllm
  - name: vllm-decode-0
    url: http://vllm-decode-0:8000/metrics
    role: decode
    engine: vllm
  - name: sglang-prefill-0
    url: http://sglang-prefill-0:30000/metrics
    role: prefill
    engine: sglang
  - name: sglang-decode-0
    url: http://sglang-decode-0:30000/metrics
    role: decode
    engine: sglang
`
