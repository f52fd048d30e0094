"""Model access: the ``ChatModel`` contract (base), an OpenAI-compatible client (openai_model),
validated structured output with bounded repair (structured), a scripted model for tests
(scripted) and the embedded SmolLM2 server manager (local_server).

Nothing is imported here so that ``import kgteam.llm.base`` stays cheap (no openai, no llama_cpp).
"""
