"""Builds the wheel with the files pccstream reads at run time inside the package.

The web build, scenarios, traces, contracts, schemas and media recipes live in the checkout
(web/dist, infra/, shared/); building a wheel (`pip install .`, `pip wheel .`,
`python -m build`) copies them to pccstream/_data/ under the same relative paths, where
pccstream.paths finds them. An editable install copies nothing: it reads the checkout.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# Keep in step with pccstream.paths.PACKAGE_DATA (setup.py cannot import the package).
PACKAGE_DATA = (
    "web/dist",
    "infra/scenarios",
    "infra/traces",
    "infra/media",
    "shared/contracts",
    "shared/schemas",
)
SOURCE = Path(__file__).resolve().parent


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not (SOURCE / "web" / "dist" / "index.html").is_file():
            raise SystemExit(
                "web/dist/index.html is missing: build the web app first "
                "(npm ci && npm run build -w web, or ./infra/bootstrap.sh)"
            )
        target = Path(self.build_lib) / "pccstream" / "_data"
        for relative in PACKAGE_DATA:
            shutil.copytree(SOURCE / relative, target / relative, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithData})
