"""Engine, image and registry fixtures of the container tests (see container_engines)."""

from container_engines import calendar_image, engine, guess_image, registry

__all__ = ["calendar_image", "engine", "guess_image", "registry"]
