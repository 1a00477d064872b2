"""Events over the world: reading (windows, recurrence), writing, and the rules a write must
satisfy.
"""
