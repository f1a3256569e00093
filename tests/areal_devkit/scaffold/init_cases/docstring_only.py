"""Workflows of this project."""
