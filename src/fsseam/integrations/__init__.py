"""Native adapters for agent frameworks, one module (and one extra) per framework.

- :mod:`fsseam.integrations.pydantic_ai` — ``FsseamToolset`` (``fsseam[pydantic-ai]``)
- :mod:`fsseam.integrations.openai_agents` — ``fsseam_tools`` (``fsseam[openai-agents]``)
- :mod:`fsseam.integrations.langchain` — ``fsseam_tools`` (``fsseam[langchain]``)

Each passes the model exactly ``ToolResult.text`` (a refusal as the
framework's own error result) and maps the framework's conversation id to the
policy session, so read-before-write holds per conversation. Importing this
package imports no framework.
"""
