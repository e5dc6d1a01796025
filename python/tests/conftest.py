"""Shared fixtures: a session on a fresh warehouse, and the CLI binary."""

import os
import subprocess

import pytest

import hidden_partitions as hp


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def session(warehouse):
    return hp.Session(warehouse=warehouse)


@pytest.fixture
def cli():
    """Run the `hidden-partitions` binary (python/run-tests builds it and sets HP_CLI)."""
    path = os.environ.get("HP_CLI")
    if not path or not os.path.exists(path):
        pytest.fail("HP_CLI must name the hidden-partitions binary (python/run-tests sets it)")

    def run(warehouse, sql, *extra):
        done = subprocess.run(
            [path, "--warehouse", warehouse, "--format", "csv", *extra, "-c", sql],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run
