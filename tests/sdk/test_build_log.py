"""The engine's build stream as each engine really sends it: every step seen once, in order,
whatever the chunking, and an error raised with the log's tail."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpgym.providers.base import ProviderError
from mcpgym.providers.build_log import read_stream, step_of

DOCKER = [
    "Step 1/3 : FROM mcpgym-base:bookworm\n",
    " ---> 6460b93bae6\n",
    "Step 2/3 : RUN python3 -m venv /opt/venv\n",
    'Step 3/3 : CMD ["mcpgym", "serve"]\n',
    "Successfully built 1234\n",
]
PODMAN = [  # a multi-stage build: the stage, then the step count within it
    "[1/2] STEP 1/2: FROM mcpgym-base:bookworm AS build\n",
    "[1/2] STEP 2/2: RUN python3 -m venv /opt/venv\n",
    "--> 6460b93bae6\n",
    "[2/2] STEP 1/2: FROM mcpgym-base:bookworm\n",
    "[2/2] STEP 2/2: COPY --from=build /opt/venv /opt/venv\n",
    "[2/2] COMMIT demo:latest\n",
]
WANT = {
    "docker": [
        "step 1/3: FROM mcpgym-base:bookworm",
        "step 2/3: RUN python3 -m venv /opt/venv",
        'step 3/3: CMD ["mcpgym", "serve"]',
    ],
    "podman": [
        "stage 1/2 step 1/2: FROM mcpgym-base:bookworm AS build",
        "stage 1/2 step 2/2: RUN python3 -m venv /opt/venv",
        "stage 2/2 step 1/2: FROM mcpgym-base:bookworm",
        "stage 2/2 step 2/2: COPY --from=build /opt/venv /opt/venv",
    ],
}


def _heard(items: list[dict[str, str]]) -> list[tuple[str, str | None]]:
    heard: list[tuple[str, str | None]] = []
    read_stream(items, "building demo", lambda stage, outcome: heard.append((stage, outcome)))
    return heard


def _expected(steps: list[str]) -> list[tuple[str, str | None]]:
    return [event for step in steps for event in ((step, None), (step, "done"))]


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_one_line_per_item(engine: str) -> None:
    lines = DOCKER if engine == "docker" else PODMAN
    assert _heard([{"stream": line} for line in lines]) == _expected(WANT[engine])


@given(data=st.data())
def test_any_chunking_of_the_text_gives_the_same_steps(data: st.DataObject) -> None:
    engine = data.draw(st.sampled_from(["docker", "podman"]))
    text = "".join(DOCKER if engine == "docker" else PODMAN)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=12)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert _heard([{"stream": chunk} for chunk in chunks]) == _expected(WANT[engine])


def test_an_error_fails_the_open_step_and_carries_the_log() -> None:
    items = [
        {"stream": "[1/2] STEP 1/2: FROM base AS build\n[1/2] STEP 2/2: RUN false\n"},
        {"error": 'building at STEP "RUN false": exit status 1'},
    ]
    heard: list[tuple[str, str | None]] = []
    with pytest.raises(ProviderError, match="exit status 1") as raised:
        read_stream(items, "building demo", lambda stage, outcome: heard.append((stage, outcome)))
    assert "STEP 2/2: RUN false" in str(raised.value)
    assert heard[-1] == ("stage 1/2 step 2/2: RUN false", "failed")


def test_a_last_line_without_newline_is_seen_and_other_lines_are_not_steps() -> None:
    assert _heard([{"stream": "Step 1/1 : FROM base"}]) == _expected(["step 1/1: FROM base"])
    for line in ["--> abc", "[2/2] COMMIT x", "Stepping 1/2 : no", "STEP x/2: no", ""]:
        assert step_of(line) is None
    assert len(step_of("Step 1/1 : RUN " + "x" * 200) or "") < 80  # clipped
