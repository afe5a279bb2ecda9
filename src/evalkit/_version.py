"""The release number, in one place.

A leaf module: the artefact and checkpoint writers stamp it into their files and the
CLI prints it, none of which should import the whole package to read one string.
"""

from __future__ import annotations

__version__ = "0.3.0"
