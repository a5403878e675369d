"""The agent-framework tool sets. The framework-neutral tools run here
against the real server; the LangChain and OpenAI Agents wrappers run where
those packages are installed (PyPI is unreachable on this project's
machines and Debian packages neither, so they skip with that reason)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import paddock
from paddock.integrations._tools import sandbox_tools


def _scripted_agent(call) -> str:  # noqa: ANN001
    """What a model would do: write a program, run it, read its output."""
    call("sandbox_write_file", path="/workspace/fib.py",
         content="a,b=0,1\nfor _ in range(10): a,b=b,a+b\nopen('out.txt','w').write(str(a))\nprint(a)\n")
    ran = call("sandbox_exec", command="python3 fib.py")
    assert "exit_code: 0" in ran and "55" in ran
    assert call("sandbox_read_file", path="/workspace/out.txt") == "55"
    assert "fib.py" in call("sandbox_list_files", path="/workspace")
    code = call("sandbox_run_code", code="total = sum(range(10))\nprint('sum', total)\ntotal * 2")
    assert code.startswith("status: ok\nstdout:\nsum 45\nresult: 90\n"), code
    assert call("sandbox_run_code", code="total + 1").startswith("status: ok\nresult: 46"), "state carries over"
    return ran


def test_neutral_tools(client: paddock.Paddock) -> None:
    with client.sandboxes.create() as sb:
        tools = {t.name: t for t in sandbox_tools(sb)}
        _scripted_agent(lambda name, **kw: tools[name].fn(**kw))
        assert tools["sandbox_read_file"].fn(path="/nope").startswith("error: not_found:")
        for t in tools.values():
            assert t.parameters["type"] == "object" and set(t.parameters["required"]) <= set(t.parameters["properties"])


@pytest.mark.skipif(importlib.util.find_spec("langchain_core") is None,
                    reason="langchain-core is not installed (not in Debian; PyPI unreachable here)")
def test_langchain_tools(client: paddock.Paddock) -> None:
    from paddock.integrations.langchain import paddock_tools
    with client.sandboxes.create() as sb:
        tools = {t.name: t for t in paddock_tools(sb)}
        _scripted_agent(lambda name, **kw: tools[name].invoke(kw))


@pytest.mark.skipif(importlib.util.find_spec("agents") is None,
                    reason="openai-agents is not installed (not in Debian; PyPI unreachable here)")
def test_openai_agents_tools(client: paddock.Paddock) -> None:
    import asyncio

    from paddock.integrations.openai_agents import paddock_function_tools
    with client.sandboxes.create() as sb:
        tools = {t.name: t for t in paddock_function_tools(sb)}

        def call(name: str, **kw) -> str:  # noqa: ANN003
            args = {k: kw.get(k) for k in tools[name].params_json_schema["properties"]}
            return asyncio.run(tools[name].on_invoke_tool(None, json.dumps(args)))
        _scripted_agent(call)
