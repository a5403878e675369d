"""Paddock tools for agent frameworks.

_tools holds the framework-neutral tool set (name, description, JSON
Schema, function); langchain and openai_agents wrap it in each framework's
documented tool type. The frameworks are optional dependencies, imported
only by their module."""
