"""A real agent harness hosted as an environment: `HarnessEnvironment` and its `/harness`
WebSocket.
"""
