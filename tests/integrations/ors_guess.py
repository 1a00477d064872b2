"""A small ORS environment (ors-sdk 0.1.0): guess a number; reward inline, `finished` at the end."""

from __future__ import annotations

from ors import Environment, Split, TextBlock, ToolOutput, tool
from pydantic import BaseModel

TASKS = {
    "train": [{"secret": 3, "hi": 10}, {"secret": 7, "hi": 10}],
    "test": [{"secret": 42, "hi": 100}],
}


class GuessInput(BaseModel):
    n: int


class ORSGuess(Environment):
    """Guess the secret number."""

    def setup(self) -> None:
        self.tries = 0

    def get_prompt(self) -> list[TextBlock]:
        return [TextBlock(text=f"Guess a number from 1 to {self.task_spec['hi']}.")]

    @classmethod
    def list_splits(cls) -> list[Split]:
        return [Split(name="train", type="train"), Split(name="test", type="test")]

    @classmethod
    def list_tasks(cls, split: str) -> list[dict]:
        return TASKS[split]

    @tool
    async def guess(self, params: GuessInput) -> ToolOutput:
        """Guess; you are told higher or lower."""
        self.tries += 1
        secret = self.task_spec["secret"]
        if params.n == secret:
            return ToolOutput(blocks=[TextBlock(text="correct")], reward=1.0, finished=True)
        word = "higher" if params.n < secret else "lower"
        return ToolOutput(blocks=[TextBlock(text=word)], reward=-0.1, finished=False)

    @tool
    def tries_so_far(self) -> ToolOutput:
        """How many guesses so far."""
        return ToolOutput(blocks=[TextBlock(text=str(self.tries))])
