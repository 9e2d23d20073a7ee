"""A scripted ``strands.models.Model``: replays fixed turns (tool uses, or a final text) as
the Converse stream events a Bedrock model sends, so a real Strands agent runs offline
(tests/otel_agent.py, tests/test_adapters_bedrock.py)."""

from __future__ import annotations

import json
from typing import Any

from strands.models import Model

Turn = list[tuple[str, str, dict[str, Any]]] | str


class Scripted(Model):
    """A model that replays fixed turns: a list of tool uses, or a final text."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.config: dict[str, Any] = {"model_id": "scripted-model"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        turn = self.turns.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(turn, str):
            yield {"contentBlockDelta": {"delta": {"text": turn}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            for call_id, name, args in turn:
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
                            "metrics": {"latencyMs": 1}}}
