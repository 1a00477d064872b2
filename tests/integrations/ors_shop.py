"""An ORS environment (ors-sdk 0.1.0) that uses what ORS offers beyond text: blocks with
`detail`, image blocks, output `metadata`, a tool without input, a sync and an async tool, a
task tool (`shared=False`, listed by `list_task_tools`), a toolset, splits named by bare strings,
rewards inline and `finished` at the end. Written as an ORS author would, for ORS alone."""

from __future__ import annotations

import base64

from ors import Environment, ImageBlock, TextBlock, ToolOutput, Toolset, tool
from ors.types import ListToolsOutput, ToolSpec
from pydantic import BaseModel, Field

TASKS = {
    "train": [
        {"item": "lamp", "price": 30, "budget": 50},
        {"item": "desk", "price": 90, "budget": 80},
    ],
    "test": [{"item": "chair", "price": 45, "budget": 45}],
}
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode()


class Offer(BaseModel):
    amount: int = Field(description="what you offer to pay")
    note: str = ""


class Units(BaseModel):
    count: int


class Ledger(Toolset):
    """Bookkeeping tools any shop environment can reuse."""

    @tool
    def balance(self) -> ToolOutput:
        """What is left of the budget."""
        left = self.env.task_spec["budget"] - self.env.spent
        return ToolOutput(blocks=[TextBlock(text=f"{left} left", detail={"left": left})])


class ORSShop(Environment):
    """Buy the item within the budget."""

    toolsets = [Ledger]

    def setup(self) -> None:
        self.spent = 0
        self.offers: list[int] = []

    def teardown(self) -> None:
        self.offers.clear()

    def get_prompt(self) -> list[TextBlock | ImageBlock]:
        spec = self.task_spec
        return [
            TextBlock(text=f"Buy the {spec['item']} for at most {spec['budget']}."),
            ImageBlock(data=PIXEL, mimeType="image/png", detail={"caption": spec["item"]}),
        ]

    @classmethod
    def list_splits(cls) -> list[str]:
        return ["train", "test"]

    @classmethod
    def list_tasks(cls, split: str) -> list[dict]:
        return TASKS[split]

    def list_task_tools(self) -> ListToolsOutput:
        schema = Units.model_json_schema()
        return ListToolsOutput(
            tools=[ToolSpec(name="stock", description="Units in stock.", input_schema=schema)]
        )

    @tool
    async def offer(self, params: Offer) -> ToolOutput:
        """Offer a price; the shop accepts at its price or above."""
        self.offers.append(params.amount)
        price = self.task_spec["price"]
        if params.amount >= price:
            self.spent = params.amount
            fair = 1.0 if params.amount <= self.task_spec["budget"] else 0.0
            return ToolOutput(
                blocks=[
                    TextBlock(text="Correct! Sold."),
                    ImageBlock(data=PIXEL, mimeType="image/png"),
                ],
                metadata={"paid": params.amount, "offers": list(self.offers)},
                reward=fair,
                finished=True,
            )
        return ToolOutput(
            blocks=[TextBlock(text="Too low.", detail={"offers": len(self.offers)})],
            reward=-0.05,
        )

    @tool
    def look(self) -> ToolOutput:
        """Look at the item."""
        return ToolOutput(blocks=[TextBlock(text=f"A {self.task_spec['item']}.")], metadata={})

    @tool
    def haggle(self) -> ToolOutput:
        """Haggle (the shopkeeper throws you out: this tool raises)."""
        raise RuntimeError("the shopkeeper is not amused")

    @tool(shared=False)
    def stock(self, params: Units) -> ToolOutput:
        """Units in stock (a task tool)."""
        return ToolOutput(blocks=[TextBlock(text=str(3 * params.count))])


class ORSCatalogue(ORSShop):
    """A shop too big to list: ORS's index-based task API (`num_tasks` and `get_task`)."""

    @classmethod
    def list_tasks(cls, split: str) -> list[dict]:
        raise NotImplementedError("a catalogue is read by index")

    @classmethod
    async def num_tasks(cls, split: str) -> int:
        return 100_000

    @classmethod
    async def get_task(cls, split: str, index: int) -> dict:
        if not 0 <= index < 100_000:
            raise IndexError(index)
        return {"item": f"item {index}", "price": index % 50, "budget": 40}
