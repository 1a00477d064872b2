"""How an environment's code runs: worker threads and timeouts (`execution`, `workers`),
measuring a result's size (`json_size`), the crash log (`crashes`), process families
(`proctree`) and giving freed memory back to the OS (`heap`).

Internal to mcpgym: authors use `MCPEnvironment`, `@tool` and the settings that reach these modules.
"""
