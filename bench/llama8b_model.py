"""The Llama-3-8B-shaped causal LM of issue 12's checks (hidden 4096, 32
heads, 8 KV heads, FFN 14336, vocab 128256, RoPE theta 500000, FP16), built
from seed 0: export_llama8b.py exports it, llama8b_logits.py rebuilds the
same weights to compare against. build(layers, seq, device) -> (model, input
ids); `vocab` and `batch` default to the real model's vocabulary and one
sequence (the layer benchmark of issue 13 uses a small vocabulary so that
the decoder layer is what is timed). Initialising on "cuda" takes seconds instead of minutes at 32 layers
(other random weights than on "cpu": only the graph of such an export is
used, its weights are regenerated where it is compiled)."""
# fp8-opt-deps: device-only (torch, transformers)
import torch
import transformers


def build(layers, seq, device="cpu", vocab=128256, batch=1):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=4096, num_attention_heads=32, num_key_value_heads=8,
        intermediate_size=14336, vocab_size=vocab, num_hidden_layers=layers,
        rope_theta=500000.0, max_position_embeddings=8192, rms_norm_eps=1e-5,
        tie_word_embeddings=False, use_cache=False)
    with torch.device(device):
        model = transformers.LlamaForCausalLM(config).to(torch.float16).eval()
    ids = torch.randint(0, config.vocab_size, (batch, seq)).to(device)
    return model, ids
