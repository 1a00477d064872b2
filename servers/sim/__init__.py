"""Simulation transports: stateless HTTP `/reset` `/step` `/state`, the `/ws` session.

Also the task routes (`/tasks`) over the environment's task set.
"""
