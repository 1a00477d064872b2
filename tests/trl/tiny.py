"""A tiny chat model built in the test process: nothing is downloaded.

- `tokenizer(texts)`: a byte-level BPE trained on `texts`, with Qwen's special tokens and TRL's own
  shipped Qwen3 chat template (so TRL recognises it and installs its tool-call parser);
- `model(tok)`: a randomly initialised two-layer Qwen3;
- `warm_up(...)`: a few hundred supervised steps on short conversations so that the model emits
  well-formed tool calls (what a real instruction-tuned model does out of the box).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from trl.chat_template_utils import qwen3_chat_template

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
MARKUP += ["<think>", "</think>"]


def tokenizer(texts: Sequence[str], vocab_size: int = 1200) -> PreTrainedTokenizerFast:
    """A BPE tokenizer trained on `texts` (rendered conversations, so tool schemas stay short)."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL + MARKUP,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(list(texts), trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    tok.chat_template = qwen3_chat_template
    return tok


def model(tok: PreTrainedTokenizerFast, seed: int = 0) -> Qwen3ForCausalLM:
    """A randomly initialised Qwen3 with a few thousand parameters per layer."""
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    return Qwen3ForCausalLM(config)


def render(tok: PreTrainedTokenizerFast, messages: list[dict[str, Any]], tools: Any) -> str:
    return str(tok.apply_chat_template(messages, tools=tools, tokenize=False))


def warm_up(
    net: Qwen3ForCausalLM,
    tok: PreTrainedTokenizerFast,
    examples: Sequence[tuple[list[dict[str, Any]], str]],
    tools: Any,
    steps: int = 120,
    lr: float = 3e-3,
) -> float:
    """Teach `net` to answer each prompt (messages) with its completion text; returns the last
    loss. The loss is on the completion tokens only, as in supervised fine-tuning."""
    batch: list[tuple[list[int], int]] = []
    for prompt, completion in examples:
        head = tok.apply_chat_template(
            prompt, tools=tools, add_generation_prompt=True, tokenize=False
        )
        ids = tok(str(head) + completion, add_special_tokens=False)["input_ids"]
        batch.append((ids, len(tok(str(head), add_special_tokens=False)["input_ids"])))
    optim = torch.optim.AdamW(net.parameters(), lr=lr)
    net.train()
    loss = torch.tensor(0.0)
    for step in range(steps):
        ids, start = batch[step % len(batch)]
        inputs = torch.tensor([ids])
        labels = inputs.clone()
        labels[0, :start] = -100
        loss = net(input_ids=inputs, labels=labels).loss
        optim.zero_grad()
        loss.backward()
        optim.step()
    net.eval()
    return float(loss)
