"""Empaquetado y estilo: environment.yml en sincronía con pyproject.toml, ruff limpio."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from maintainer.paths import ROOT as REPO_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def pyproject():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def conda_pip_requirements():
    with open(os.path.join(REPO_ROOT, "environment.yml"), encoding="utf-8") as f:
        env = yaml.safe_load(f)
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return sorted(r for r in pip if not r.startswith("-e"))


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = pyproject()
    declared = project["dependencies"] + [
        r for extra in project["optional-dependencies"].values() for r in extra if "python_version" not in r
    ]
    assert conda_pip_requirements() == sorted(declared)


def test_every_dependency_has_a_lower_bound():
    project = pyproject()
    for requirement in project["dependencies"] + project["optional-dependencies"]["test"]:
        assert re.search(r">=\s*\d", requirement), requirement


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff_is_clean(command):
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff no está instalado (viene con el extra «test»)")
    done = subprocess.run([ruff, *command, "."], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
