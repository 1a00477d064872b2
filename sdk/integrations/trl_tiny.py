"""A tiny chat model built on this machine, for trying TRL training without a model hub.

    >>> model, tokenizer = tiny_chat_model(Adapter, [(prompt, "finish", {...})])  # doctest: +SKIP
    >>> GRPOTrainer(model=model, processing_class=tokenizer, ...)                 # doctest: +SKIP

It is what an instruction-tuned model is to the trainer, in miniature, and nothing is
downloaded: `tokenizer(...)` trains a byte-level BPE on the conversations as TRL's own shipped
Qwen3 chat template renders them (so TRL recognises the template and installs its tool-call
parser), `model(...)` is a randomly initialised two-layer Qwen3 (width 64), and `warm_up(...)`
runs a few hundred supervised steps so that the model answers each prompt with a well-formed
tool call. `tiny_chat_model` does all three for a trainer adapter (`environment_factory(...)`)
and examples of the calls to teach. To train a real model instead, pass its hub id or local
folder as `GRPOTrainer(model=...)` and its tokenizer as `processing_class`.

Needs torch, transformers and trl (`pip install 'mcpgym[trl]'` after a torch build).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["as_message", "model", "tiny_chat_model", "tokenizer", "tool_call", "warm_up"]

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKUP = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]

Messages = list[dict[str, Any]]


def _train(texts: Sequence[str], vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # pyright: ignore[reportMissingImports]
    from transformers import PreTrainedTokenizerFast  # pyright: ignore[reportMissingImports]
    from trl.chat_template_utils import qwen3_chat_template  # pyright: ignore[reportMissingImports]

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


def tokenizer(conversations: Sequence[Messages], tools: Any) -> Any:
    """A BPE tokenizer trained on `conversations` rendered with `tools` (TRL's Qwen3 template)."""
    from trl.chat_template_utils import qwen3_chat_template  # pyright: ignore[reportMissingImports]

    boot = _train([qwen3_chat_template], 300)  # only to render the corpus with the template
    texts = [str(boot.apply_chat_template(c, tools=tools, tokenize=False)) for c in conversations]
    return _train(texts * 4, 2000)


def model(tok: Any, seed: int = 0) -> Any:
    """A randomly initialised Qwen3 (two layers, width 64) for the tokenizer `tok`."""
    import torch  # pyright: ignore[reportMissingImports]
    from transformers import Qwen3Config, Qwen3ForCausalLM  # pyright: ignore[reportMissingImports]

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
    net: Any,
    tok: Any,
    examples: Sequence[tuple[Messages, str]],
    tools: Any,
    steps: int = 60,
    lr: float = 1e-2,
) -> float:
    """Teach `net` to answer each prompt with its completion text; returns the last loss (on the
    completion tokens only, as in supervised fine-tuning)."""
    import torch  # pyright: ignore[reportMissingImports]

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


def _messages(prompt: str | Messages) -> Messages:
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)


def tiny_chat_model(
    adapter: type,
    examples: Sequence[tuple[str | Messages, str, dict[str, Any]]],
    *,
    warm_steps: int = 300,
    seed: int = 0,
) -> tuple[Any, Any]:
    """A tiny model and its tokenizer that answer each example's prompt with its tool call.

    Args:
        adapter: the class `environment_factory(...)` made (its tools are rendered in the prompts).
        examples: `(prompt, tool name, arguments)`: a prompt (text or messages) and the call a
            model should answer it with.
        warm_steps: supervised steps of the warm-up (a few hundred on a CPU take seconds).
        seed: the initial weights' seed.

    Raises:
        RuntimeError: the warm-up did not fit the examples (its last loss is 1.0 or more).
    """
    import torch  # pyright: ignore[reportMissingImports]

    from mcpgym.integrations.trl import trainer_tools

    torch.set_num_threads(1)  # a two-layer model gains nothing from threads
    tools = trainer_tools(adapter)
    pairs = [(_messages(p), tool_call(name, args)) for p, name, args in examples]
    corpus = [_messages(p) + as_message(name, args) for p, name, args in examples]
    tok = tokenizer(corpus, tools)
    net = model(tok, seed=seed)
    last = warm_up(net, tok, pairs, tools, steps=warm_steps)
    if last >= 1.0:
        raise RuntimeError(f"the warm-up did not fit the examples (last loss {last:.2f})")
    return net, tok
