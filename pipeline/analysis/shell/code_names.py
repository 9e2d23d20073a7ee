"""Name helpers of the Python visitor (:mod:`pipeline.analysis.shell.code_py`): dotted call names,
``os.environ`` references, file-name-looking strings."""

from __future__ import annotations

import ast
import re

__all__ = ["dotted", "is_environ", "pathlike"]

_EXTS = re.compile(r"\.(txt|csv|tsv|json|jsonl|ya?ml|toml|xml|html?|md|py|sh|js|ts|sql|db|sqlite3?|log|conf|"
                   r"cfg|ini|env|pem|key|crt|pub|zip|tar|gz|tgz|pdf|docx?|xlsx?|pptx?|odt|ods|png|jpe?g|gif|"
                   r"bin|bak|pkl|pickle|parquet|npy|h5|kdbx|cookies?|p12|pfx|gpg|asc|ipynb)$", re.I)


def dotted(node: ast.AST) -> str:
    """``a.b.c`` of a name/attribute chain (``f()`` for a call, ``?`` for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{dotted(node.func)}()"
    return "?"


def is_environ(node: ast.AST) -> bool:
    """True for ``os.environ`` (or ``environ`` imported from os)."""
    return dotted(node) in ("os.environ", "environ", "os.environb")


def pathlike(text: str) -> bool:
    """A string that names a file: absolute/home/relative path or a known extension."""
    return bool(text) and "\n" not in text and len(text) < 400 and (
        text.startswith(("/", "~/", "./", "../")) or bool(_EXTS.search(text)))
