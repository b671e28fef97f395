"""Only for scrapyd-deploy, which builds an egg with ``python setup.py bdist_egg``; everything is in pyproject.toml."""

from setuptools import setup  # type: ignore[import-untyped]

setup()
