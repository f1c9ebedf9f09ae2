"""docs/architecture.md's import rules are the imports of the code: each package imports
exactly the packages its line lists (found with `ast`, imports inside functions included)."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _unit(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "kerasattn" or len(parts) == 1:
        return None
    return parts[1].removesuffix(".py")


def imports_in_code() -> dict[str, set[str]]:
    edges = defaultdict(set)
    for path in (ROOT / "kerasattn").rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        source = _unit(".".join(rel.parts))
        if source in (None, "__init__", "__main__"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = ([f"kerasattn.{a.name}" for a in node.names]
                         if node.module == "kerasattn" else [node.module])
            else:
                continue
            for name in names:
                target = _unit(name)
                if target and target != source:
                    edges[source].add(target)
    return dict(edges)


def imports_in_docs() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Import rules", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    rules = {}
    for line in block.strip().splitlines():
        m = re.fullmatch(r"(\w+)\s+->\s+([\w ]+)", line.strip())
        assert m, f"docs/architecture.md: unreadable import rule {line!r}"
        rules[m.group(1)] = set(m.group(2).split())
    return rules


def test_the_documented_import_rules_are_the_code_imports():
    code, docs = imports_in_code(), imports_in_docs()
    extra = {k: sorted(v - docs.get(k, set())) for k, v in code.items()
             if v - docs.get(k, set())}
    stale = {k: sorted(v - code.get(k, set())) for k, v in docs.items()
             if v - code.get(k, set())}
    assert not extra, f"imports the rules do not allow (fix the import or the rule): {extra}"
    assert not stale, f"rules no code uses (remove them from docs/architecture.md): {stale}"


def test_the_rules_have_no_cycle_and_the_command_layer_only_dispatches():
    rules = imports_in_docs()
    done = set()

    def visit(unit, path):
        assert unit not in path, f"import cycle: {' -> '.join(path + [unit])}"
        if unit in done:
            return
        for target in rules.get(unit, ()):
            visit(target, path + [unit])
        done.add(unit)

    for unit in rules:
        visit(unit, [])
    assert rules["cli"] == {"_env", "course", "grader"}
    assert not rules["layers"] & {"models", "steps", "decoding", "training", "inference"}
    assert "training" not in rules["inference"] and "course" not in rules["training"]
