"""Chat platform adapters: translate between a platform and the Bot service."""
