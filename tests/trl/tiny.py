"""A tiny chat model built in the test process: nothing is downloaded.

- `tokenizer(conversations, tools)`: a byte-level BPE trained on the conversations as TRL's own
  shipped Qwen3 chat template renders them (so TRL recognises the template and installs its
  tool-call parser, and the rendered tool schemas come out as few tokens);
- `model(tok)`: a randomly initialised two-layer Qwen3;
- `warm_up(...)`: a few dozen supervised steps so that the model answers a prompt with a
  well-formed tool call, as an instruction-tuned model would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
from trl.chat_template_utils import qwen3_chat_template

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
MARKUP += ["<think>", "</think>"]

Messages = list[dict[str, Any]]


def _train(texts: Sequence[str], vocab_size: int) -> PreTrainedTokenizerFast:
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


def tokenizer(conversations: Sequence[Messages], tools: Any) -> PreTrainedTokenizerFast:
    """A BPE tokenizer trained on `conversations` rendered with `tools`."""
    boot = _train([qwen3_chat_template], 300)  # only to render the corpus with the template
    texts = [str(boot.apply_chat_template(c, tools=tools, tokenize=False)) for c in conversations]
    return _train(texts * 4, 2000)


def model(tok: PreTrainedTokenizerFast, seed: int = 0) -> Qwen3ForCausalLM:
    """A randomly initialised Qwen3 (two layers, width 64)."""
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


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    """What a Qwen3 model writes to call one tool (the completion text, end token included)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call><|im_end|>"


def as_message(name: str, arguments: dict[str, Any]) -> Messages:
    """The same call as an assistant message (for the tokenizer's corpus)."""
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return [{"role": "assistant", "content": "", "tool_calls": [call]}]


def warm_up(
    net: Qwen3ForCausalLM,
    tok: PreTrainedTokenizerFast,
    examples: Sequence[tuple[Messages, str]],
    tools: Any,
    steps: int = 60,
    lr: float = 1e-2,
) -> float:
    """Teach `net` to answer each prompt with its completion text; returns the last loss (on the
    completion tokens only, as in supervised fine-tuning)."""
    batch: list[tuple[list[int], int]] = []
    for prompt, completion in examples:
        head = str(
            tok.apply_chat_template(prompt, tools=tools, tokenize=False, add_generation_prompt=True)
        )
        ids = tok(head + completion, add_special_tokens=False)["input_ids"]
        batch.append((ids, len(tok(head, add_special_tokens=False)["input_ids"])))
    optim = torch.optim.AdamW(net.parameters(), lr=lr)
    net.train()
    last = 0.0
    for step in range(steps):
        ids, start = batch[step % len(batch)]
        inputs = torch.tensor([ids])
        labels = inputs.clone()
        labels[0, :start] = -100
        loss = net(input_ids=inputs, labels=labels).loss
        optim.zero_grad()
        loss.backward()
        optim.step()
        last = float(loss.detach())
    net.eval()
    return last
