"""One module per figure of `just bench` (load, sessions, RSS, reset, instructions, prompt,
start-up): each measures, asserts that the work it timed really ran, and adds rows to the issue
table."""
