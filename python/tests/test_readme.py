"""Every ```python block of README.md's Python section runs as written, in
README order, in one namespace and one scratch directory. A block right
after a line `<!-- not run … -->` is skipped."""

import os
import pathlib

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_blocks(text):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("## Python"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    blocks, i = [], start
    while i < end:
        if lines[i].startswith("```python") and not lines[i - 1].startswith("<!-- not run"):
            j = next(k for k in range(i + 1, end) if lines[k].startswith("```"))
            blocks.append((i + 1, "\n".join(lines[i + 1 : j])))
            i = j
        i += 1
    return blocks


def test_readme_python_examples_run(tmp_path, monkeypatch):
    blocks = python_blocks(README.read_text())
    assert blocks, "README.md has no Python examples"
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for line, code in blocks:
        exec(compile(code, f"README.md:{line}", "exec"), namespace)
    assert os.path.isdir(tmp_path / "warehouse")
