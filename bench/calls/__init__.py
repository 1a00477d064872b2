"""The per-call comparison machinery: the servers under test and the bare Starlette floor, the load
driver and its client processes, the micro and profile runs, and the tables they print."""
