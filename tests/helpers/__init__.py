"""Shared test helpers: throwaway environments, waiting with deadlines, a real uvicorn server."""
