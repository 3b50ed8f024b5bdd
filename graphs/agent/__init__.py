"""The agent graph: guard, generate and tools, approvals for high-risk tools, verify."""
