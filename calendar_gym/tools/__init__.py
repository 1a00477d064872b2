"""The Calendar API v3 as tools: argument models and validation, errors, suggestions, one mixin per
resource.
"""
