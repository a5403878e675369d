"""OpenAI Agents SDK (Python) function tools for a Paddock sandbox.

    from agents import Agent
    from paddock import AsyncSandbox
    from paddock.integrations.openai_agents import paddock_function_tools

    agent = Agent(name="coder", tools=paddock_function_tools(sb))

The tools are FunctionTool objects with strict JSON schemas. (The SDK's
sandbox-client interface, BaseSandboxClient, is not implemented yet: it
could not be installed or tested here.)"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ._tools import sandbox_tools


def _nullable(v: dict[str, Any]) -> dict[str, Any]:
    out = {**v, "type": [v["type"], "null"]}
    if "enum" in v:  # an enum must name null too, or a null argument fails its own schema
        out["enum"] = [*v["enum"], None]
    return out


def paddock_function_tools(sb: Any, *, browser: bool = False) -> list[Any]:
    """FunctionTools acting on sb (a sync paddock.Sandbox; calls run in a
    worker thread so the agent's event loop is not blocked)."""
    from agents import FunctionTool

    out = []
    for t in sandbox_tools(sb, browser=browser):
        async def invoke(ctx: Any, args: str, _t=t) -> str:  # noqa: ANN001
            kw = json.loads(args or "{}")
            return await asyncio.to_thread(_t.fn, **kw)

        schema = dict(t.parameters)
        # Strict mode wants every property listed as required (optional ones nullable).
        props = {k: (_nullable(v) if k not in schema["required"] else v) for k, v in schema["properties"].items()}
        schema = {**schema, "properties": props, "required": list(props)}
        out.append(FunctionTool(name=t.name, description=t.description, params_json_schema=schema,
                                on_invoke_tool=invoke, strict_json_schema=True))
    return out
