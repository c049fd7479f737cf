"""Adapters for agent frameworks; each needs its framework (``pip install 'memoryd[NAME]'``).

* :mod:`memoryd.agents.frameworks.langgraph`: a LangGraph ``BaseStore`` on memoryd.
* :mod:`memoryd.agents.frameworks.openai_agents`: an OpenAI Agents SDK ``Session`` and
  the memory tool as a ``FunctionTool``.
* :mod:`memoryd.agents.frameworks.pydantic_ai`: the memory tool and recall for Pydantic AI.
"""
