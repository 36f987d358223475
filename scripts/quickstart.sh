#!/usr/bin/env bash
# Run the quickstart notebook top to bottom, offline (the offline demo model and the SQLite
# task server ollie-tasks), and say where the executed copy is. Needs scripts/setup.sh first.
# Usage: scripts/quickstart.sh [OUTPUT_DIR]   (default: /tmp/ollie-quickstart)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/ollie-quickstart}
if [ ! -x .venv/bin/python ]; then
  echo "quickstart: no .venv here; run: bash scripts/setup.sh" >&2
  exit 1
fi
mkdir -p "$OUT"
.venv/bin/python - notebooks/01-quickstart.ipynb "$OUT" <<'EOF'
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from ipykernel.kernelspec import RESOURCES, get_kernel_dict
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient


class ThisPython(KernelSpecManager):
    """The kernel of this interpreter (the venv's), whatever other kernels are installed."""

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())


source, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
nb = nbformat.read(source, as_version=4)
started = time.monotonic()
client = NotebookClient(
    nb,
    km=KernelManager(kernel_name="python3", kernel_spec_manager=ThisPython()),
    timeout=120,
    resources={"metadata": {"path": str(source.parent)}},  # it runs in notebooks/
)
client.execute(stderr=subprocess.DEVNULL)  # the kernel's own log, not cell output
target = out_dir / source.name
nbformat.write(nb, target)

cells = [c for c in nb.cells if c.cell_type == "code"]
graphs = sum("<svg" in o.get("data", {}).get("text/html", "") for c in cells for o in c.outputs)
print(f"ran {len(cells)} cells of {source} in {time.monotonic() - started:.1f} s; {graphs} plan graphs drawn")
print(f"executed notebook: {target}")
EOF
echo "tasks it saved:   .venv/bin/ollie-tasks tree --db notebooks/.ollie/01-quickstart/tasks.db"
if [ -x .venv/bin/jupyter-lab ]; then
  echo "open it in JupyterLab: .venv/bin/jupyter lab $OUT/01-quickstart.ipynb"
else
  echo "open it in JupyterLab: .venv/bin/pip install jupyterlab && .venv/bin/jupyter lab $OUT/01-quickstart.ipynb"
fi
echo "or run it yourself:    .venv/bin/jupyter lab notebooks/01-quickstart.ipynb"
