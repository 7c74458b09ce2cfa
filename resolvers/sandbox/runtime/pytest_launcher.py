"""The kernel's test runner inside the sandbox (run as ``python3 -I -S`` so no
sitecustomize, .pth file or workspace module is loaded before it).

pytest and everything it reports with are imported before the workspace joins
``sys.path``, and the workspace is appended, never prepended, so a proposal's files cannot
replace them. Conftest files, the workspace's ini files and plugin auto-loading are off;
the verdicts are written as JUnit XML to /report, which the kernel reads after the run.
"""

import os
import sys

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.path.append("/usr/lib/kernel-site")

import xml.etree.ElementTree  # noqa: F401  (the JUnit writer's dependencies, loaded first)

import _pytest.junitxml  # noqa: F401
import pytest

sys.path.append("/workspace")
sys.exit(pytest.main([
    "-c", "/usr/lib/kernel-runtime/pytest.ini", "--rootdir=/workspace", "--noconftest",
    "-p", "no:cacheprovider", "--import-mode=append", "-o", "junit_family=xunit1",
    "--junitxml=/report/junit.xml", "-q", "-rA", "--", *sys.argv[1:]]))
