"""LLM providers behind one streaming interface: OpenAI-compatible over HTTP, and offline."""
