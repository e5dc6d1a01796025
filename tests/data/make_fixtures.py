#!/usr/bin/env python3
"""Regenerate every table fixture under tests/data (Iceberg and Delta) and the expected answers.

    python3 -m venv /work/venv-fixtures          # outside the repository
    /work/venv-fixtures/bin/pip install -r tests/data/requirements-fixtures.txt
    /work/venv-fixtures/bin/python tests/data/make_fixtures.py

Runs make_iceberg.py then make_delta.py (each can also be run alone).  Both scripts first
delete what they own (/tmp/hp-fixtures/{iceberg,iceberg_bad,delta,delta_bad},
tests/data/{iceberg,iceberg_bad,delta,delta_bad} and tests/data/expected/<same>) and then
write everything again.  See tests/data/README.md.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

for script in ("make_iceberg.py", "make_delta.py"):
    subprocess.run([sys.executable, "-B", os.path.join(HERE, script)], check=True)
