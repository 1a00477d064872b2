"""`LLMAgent`: a tool-calling loop against any OpenAI-compatible endpoint.

Also the chat-completions message shapes it sends (`mcpgym.harness.llm.messages`).
"""
