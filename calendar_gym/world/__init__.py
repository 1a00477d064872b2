"""The world: one session's SQLite store of users, calendars and events, ACLs, scopes, time and the
seed.
"""
