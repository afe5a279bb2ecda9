"""The GitHub layer: context, baseline stores, the sticky comment, job outputs, the action.

Nothing here is imported by ``import evalkit``; PyGithub is imported lazily inside the
functions that talk to the REST API, so the CLI starts fast and the pure core never
depends on GitHub.
"""
