"""`@tool` and `ToolSpec`: schemas from type hints, output schemas, refusals, modes, validation."""

import enum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from mcpgym import MCPEnvironment, ToolSpec, tool
from mcpgym.errors import EnvironmentDefinitionError, InvalidToolArguments
from mcpgym.tools import RESERVED_NAMES


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int = 0


class NotAModel:
    """A plain class pydantic cannot describe."""


class Kitchen(MCPEnvironment):
    @tool
    def everything(
        self,
        p: Point,
        color: Color,
        kind: Literal["a", "b"],
        maybe: Optional[int] = None,  # noqa: UP045 - the typing spelling is what we test
        union: int | None = None,
        tags: list[str] = [],  # noqa: B006 - pydantic copies defaults
        weights: dict[str, float] | None = None,
        n: Annotated[int, Field(description="How many.", ge=0)] = 1,
        flag: bool = False,
    ) -> Point:
        """Use every kind of type hint.

        Args:
            p: Where to start.
            kind: Which variant,
                on two lines.
            n: Ignored: the Annotated description wins.
        """
        return p

    @tool
    def number(self) -> int:
        """Return a number."""
        return 1

    @tool
    def points(self) -> list[Point]:
        return []

    @tool
    def mapping(self) -> dict[str, int]:
        return {}

    @tool
    def maybe_point(self) -> Point | None:
        return None

    @tool
    def nothing(self) -> None:
        return None

    @tool
    def untyped(self, x):  # type: ignore[no-untyped-def]
        return x

    @tool(name="renamed", description="Explicit description.", annotations={"readOnlyHint": True})
    def original(self) -> str:
        """Docstring loses to description=."""
        return "x"

    @tool
    async def coro(self, a: int) -> int:
        return a


def spec(name: str) -> ToolSpec:
    return Kitchen.tool_specs[name]


# -- input schemas -------------------------------------------------------------------------------


def test_input_schema_is_a_closed_object_with_required_fields() -> None:
    schema = spec("everything").input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["p", "color", "kind"]
    assert "title" not in schema


def test_pydantic_model_argument_is_a_ref_with_defs() -> None:
    schema = spec("everything").input_schema
    assert schema["properties"]["p"]["$ref"] == "#/$defs/Point"
    assert schema["$defs"]["Point"]["required"] == ["x"]


def test_enum_and_literal_become_enums() -> None:
    schema = spec("everything").input_schema
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert schema["properties"]["kind"]["enum"] == ["a", "b"]


@pytest.mark.parametrize("name", ["maybe", "union"])
def test_optional_is_nullable_with_a_null_default(name: str) -> None:
    prop = spec("everything").input_schema["properties"][name]
    assert {"type": "integer"} in prop["anyOf"] and {"type": "null"} in prop["anyOf"]
    assert prop["default"] is None


def test_lists_dicts_and_defaults() -> None:
    props = spec("everything").input_schema["properties"]
    assert props["tags"]["type"] == "array"
    assert props["tags"]["items"] == {"type": "string"}
    assert props["tags"]["default"] == []
    assert {"type": "object", "additionalProperties": {"type": "number"}} in props["weights"][
        "anyOf"
    ]
    assert props["flag"] == {"default": False, "title": "Flag", "type": "boolean"}


def test_annotated_field_description_and_constraints() -> None:
    n = spec("everything").input_schema["properties"]["n"]
    assert n["description"] == "How many."
    assert n["minimum"] == 0
    assert n["default"] == 1


def test_docstring_args_describe_parameters() -> None:
    props = spec("everything").input_schema["properties"]
    assert props["p"]["description"] == "Where to start."
    assert props["kind"]["description"] == "Which variant, on two lines."
    assert "description" not in props["color"]


def test_description_is_the_docstring_without_the_args_section() -> None:
    assert spec("everything").description == "Use every kind of type hint."
    assert spec("number").description == "Return a number."
    assert spec("points").description == ""


def test_sections_after_args_stay_out_of_the_description() -> None:
    class Documented(MCPEnvironment):
        @tool
        def add(self, a: int) -> int:
            """Add one.

            Args:
                a: The number.

            Returns:
                The number plus one.

            Raises:
                ValueError: never.
            """
            return a + 1

    s = Documented.tool_specs["add"]
    assert s.description == "Add one."
    assert s.input_schema["properties"]["a"]["description"] == "The number."


def test_explicit_name_description_and_annotations() -> None:
    s = spec("renamed")
    assert "original" not in Kitchen.tool_specs
    assert s.method == "original"
    assert s.description == "Explicit description."
    assert s.info.annotations == {"readOnlyHint": True}
    assert s.info.name == "renamed"


def test_untyped_parameter_accepts_anything() -> None:
    s = spec("untyped")
    assert s.input_schema["required"] == ["x"]
    assert s.validate({"x": [1, "a"]}) == {"x": [1, "a"]}


def test_async_tools_are_detected() -> None:
    assert spec("coro").is_async is True
    assert spec("number").is_async is False


# -- output schemas ------------------------------------------------------------------------------


def test_object_return_is_the_output_schema() -> None:
    s = spec("everything")
    assert s.output_schema is not None
    assert s.output_schema["type"] == "object"
    assert s.output_schema["required"] == ["x"]
    assert s.structured(s.dump_result(Point(x=2))) == {"x": 2, "y": 0}


def test_dict_return_is_an_object_schema_too() -> None:
    s = spec("mapping")
    assert s.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert s.structured({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("name", ["number", "points", "maybe_point"])
def test_non_object_return_is_wrapped_in_result(name: str) -> None:
    s = spec(name)
    assert s.output_schema is not None
    assert s.output_schema["type"] == "object"
    assert s.output_schema["required"] == ["result"]
    assert set(s.output_schema["properties"]) == {"result"}


def test_wrapped_output_keeps_its_defs_at_the_top() -> None:
    s = spec("points")
    assert s.output_schema is not None
    assert s.output_schema["properties"]["result"]["items"] == {"$ref": "#/$defs/Point"}
    assert "Point" in s.output_schema["$defs"]
    dumped = s.dump_result([Point(x=1)])
    assert dumped == [{"x": 1, "y": 0}]
    assert s.structured(dumped) == {"result": [{"x": 1, "y": 0}]}


@pytest.mark.parametrize("name", ["nothing", "untyped"])
def test_no_output_schema_without_a_return_type(name: str) -> None:
    assert spec(name).output_schema is None
    assert spec(name).info.output_schema is None


# -- refusals at class definition ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_reserved_method_names_are_refused(name: str) -> None:
    def method(self: Any) -> str:
        return "x"

    with pytest.raises(EnvironmentDefinitionError, match="reserved"):
        type("Bad", (MCPEnvironment,), {name: tool(method)})


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_reserved_names_are_refused_through_name(name: str) -> None:
    with pytest.raises(EnvironmentDefinitionError, match="reserved"):

        class Bad(MCPEnvironment):
            @tool(name=name)
            def harmless(self) -> str:
                return "x"


def test_reserved_names_are_exactly_the_contract() -> None:
    assert frozenset({"reset", "step", "state", "close"}) == RESERVED_NAMES


@pytest.mark.parametrize(
    "signature",
    ["self, *args: int", "self, **kwargs: int", "self, a: int, /"],
    ids=["*args", "**kwargs", "positional-only"],
)
def test_unnameable_parameters_are_refused(signature: str) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def f({signature}) -> int:\n    return 1", namespace)
    with pytest.raises(EnvironmentDefinitionError, match="f"):
        type("Bad", (MCPEnvironment,), {"f": tool(namespace["f"])})


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(EnvironmentDefinitionError, match="two methods define tool 'dup'"):

        class Bad(MCPEnvironment):
            @tool(name="dup")
            def one(self) -> int:
                return 1

            @tool(name="dup")
            def two(self) -> int:
                return 2


@pytest.mark.parametrize("name", ["has space", "x" * 129, "ünïcode", "a/b"])
def test_invalid_tool_names_are_refused(name: str) -> None:
    with pytest.raises(EnvironmentDefinitionError, match="tool name"):

        class Bad(MCPEnvironment):
            @tool(name=name)
            def fine(self) -> int:
                return 1


def test_unsupported_argument_type_is_refused_at_class_definition() -> None:
    with pytest.raises(EnvironmentDefinitionError, match="unsupported argument type") as caught:

        class Bad(MCPEnvironment):
            @tool
            def take(self, count: int, thing: NotAModel) -> int:
                return 1

    message = str(caught.value)  # one line: the argument, its type and what to use instead
    assert "\n" not in message and "'thing' is a " in message and "NotAModel" in message
    assert "fix: use str, int" in message
    assert "arbitrary_types_allowed" not in message  # pydantic's advice does not apply to a tool


def test_a_tool_knows_its_untyped_arguments_and_where_it_is() -> None:
    class Loose(MCPEnvironment):
        @tool
        def add(self, a, b: int):  # type: ignore[no-untyped-def]
            """Add."""
            return a + b

    spec = Loose.tool_specs["add"]
    assert spec.untyped_args == ("a",)
    assert spec.where.startswith("test_tools.py:") and spec.where.endswith("Loose.add)")


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(EnvironmentDefinitionError, match="mode"):
        tool(mode="both")  # type: ignore[call-overload]


def test_environment_definition_error_is_a_type_error() -> None:
    assert issubclass(EnvironmentDefinitionError, TypeError)


# -- inheritance, modes ----------------------------------------------------------------------------


class Moded(MCPEnvironment):
    @tool
    def both(self) -> int:
        return 0

    @tool(mode="simulation")
    def sim(self) -> int:
        return 1

    @tool(mode="production")
    def prod(self) -> int:
        return 2


@pytest.mark.parametrize(
    ("mode", "visible"), [("simulation", {"both", "sim"}), ("production", {"both", "prod"})]
)
def test_visible_in(mode: Literal["simulation", "production"], visible: set[str]) -> None:
    assert {name for name, s in Moded.tool_specs.items() if s.visible_in(mode)} == visible
    assert Moded.tool_specs["sim"].mode == "simulation"
    assert Moded.tool_specs["both"].mode is None


def test_subclass_inherits_and_overrides_tools() -> None:
    class Child(Moded):
        @tool(mode="production")
        def both(self) -> int:  # the subclass wins
            return 10

        @tool
        def extra(self) -> int:
            return 3

    assert set(Child.tool_specs) == {"both", "sim", "prod", "extra"}
    assert Child.tool_specs["both"].mode == "production"
    assert Moded.tool_specs["both"].mode is None  # the base class is untouched
    assert "extra" not in Moded.tool_specs


def test_tool_only_attaches_metadata() -> None:
    def f(self: Any) -> int:
        return 1

    assert tool(f) is f
    assert f.__mcpgym_tool__.name is None  # type: ignore[attr-defined]


def test_specs_are_built_once_per_class() -> None:
    assert Kitchen.tool_specs is Kitchen.tool_specs
    a, b = Kitchen(), Kitchen()
    assert a.tool_specs["number"] is b.tool_specs["number"]


# -- argument validation -------------------------------------------------------------------------


def test_validate_returns_typed_keyword_arguments() -> None:
    kwargs = spec("everything").validate({"p": {"x": 1}, "color": "blue", "kind": "b", "n": "3"})
    assert kwargs["p"] == Point(x=1)
    assert kwargs["color"] is Color.BLUE
    assert kwargs["n"] == 3
    assert kwargs["tags"] == [] and kwargs["maybe"] is None and kwargs["flag"] is False


def test_validation_errors_list_every_field() -> None:
    s = spec("everything")
    with pytest.raises(InvalidToolArguments) as caught:
        s.validate({"p": {"x": "a"}, "color": "green", "n": -1, "bogus": 1})
    err = caught.value
    fields = {e["field"]: e for e in err.detail["errors"]}
    assert set(fields) == {"p.x", "color", "kind", "n", "bogus"}
    assert fields["p.x"]["got"] == "a"
    assert fields["color"]["got"] == "green"
    assert fields["kind"]["type"] == "missing" and "got" not in fields["kind"]
    assert fields["bogus"]["type"] == "extra_forbidden"
    info = err.to_info()
    assert info["error_type"] == "invalid_args"
    assert info["tool"] == "everything"
    assert info["input_schema"] == s.input_schema
    for name in fields:
        assert name in info["message"]


def test_validate_none_means_no_arguments() -> None:
    assert spec("number").validate(None) == {}
    with pytest.raises(InvalidToolArguments):
        spec("coro").validate(None)
