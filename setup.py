"""Packaging beyond what pyproject.toml can say: the lesson scripts ship inside the package.

``lessons/`` (the clone's folder) is installed as ``kerasattn/lessons/``, so ``kerasattn
lesson N`` runs from a regular (non-editable) install. Everything else is in pyproject.toml.
"""
from setuptools import find_namespace_packages, setup

setup(
    packages=find_namespace_packages(include=["kerasattn", "kerasattn.*"],
                                    exclude=["*.__pycache__"]) + ["kerasattn.lessons"],
    package_dir={"kerasattn.lessons": "lessons"},
    package_data={"kerasattn.lessons": ["*.py"], "kerasattn.explore": ["*.js", "*.css"]},
)
