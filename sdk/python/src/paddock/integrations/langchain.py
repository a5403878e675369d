"""LangChain tools for a Paddock sandbox (langchain-core's StructuredTool).

    from paddock import Sandbox
    from paddock.integrations.langchain import paddock_tools

    sb = Sandbox.create()
    tools = paddock_tools(sb)          # bind to any chat model: model.bind_tools(tools)
"""

from __future__ import annotations

from typing import Any

from ._tools import sandbox_tools


def paddock_tools(sb: Any, *, browser: bool = False) -> list[Any]:
    """LangChain StructuredTools acting on sb (a paddock.Sandbox)."""
    from langchain_core.tools import StructuredTool

    return [StructuredTool.from_function(func=t.fn, name=t.name, description=t.description,
                                         args_schema=t.parameters)
            for t in sandbox_tools(sb, browser=browser)]
