"""A plain package that imports its exports eagerly."""

from .base import BaseThing  # the existing export

__all__ = ["BaseThing"]
