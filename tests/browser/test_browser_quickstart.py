"""The quickstart in JupyterLab in a real browser: Run All draws the plan graph, widgets render.

A real `jupyter lab` on 127.0.0.1 serves a temporary copy of notebooks/ (outputs cleared,
private Jupyter and ollie dirs, the offline model); Debian's Chromium, driven by Playwright,
opens 01-quickstart.ipynb, runs every cell from the Run menu, then adds a `%ollie plan --watch`
cell as a user would. The README's screenshot, docs/screenshot-quickstart.png, is taken here
(saved there with OLLIE_UPDATE_SCREENSHOT=1).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from tests.support.absent import skip_or_fail
from tests.support.waits import wait_until

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    skip_or_fail(
        f"{CHROMIUM} is missing (Debian: apt-get install chromium)", allow_module_level=True
    )
try:
    import playwright.sync_api as playwright
except ImportError:
    skip_or_fail(
        "the playwright package is missing (pip install -e '.[dev]')", allow_module_level=True
    )

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = "01-quickstart.ipynb"
SCREENSHOT = REPO / "docs" / "screenshot-quickstart.png"
# Headless Debian Chromium in a closed network: without the background-networking flags its
# own update and sync connections are refused and slow every page down.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
SERVER_START = 60.0  # seconds; generous, a cold start on 2 cores takes about 3
UI_TIMEOUT = 30_000  # milliseconds, for one page element
RUN_ALL_TIMEOUT = 90_000  # milliseconds, for every cell of the quickstart
KERNEL_IDLE = re.compile(r"^Python 3 \(ipykernel\) \| Idle$")
WATCH_CELL = "%ollie plan --watch 1"
# JupyterLab settings of a fresh profile: no "get Jupyter news?" toast over the screenshot.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


@dataclass
class Lab:
    """A running JupyterLab: where it listens, its token, the dir it serves, its log."""

    url: str
    token: str
    root: Path
    log: Path

    def page(self, path: str) -> str:
        """The browser URL of a /lab path, logged in by token, with a fresh workspace."""
        return f"{self.url}{path}?token={self.token}&reset"

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_env(base: Path) -> dict[str, str]:
    """This environment with private HOME, Jupyter, IPython and ollie dirs, and the offline model."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OLLIE_", "JUPYTER", "IPYTHON"))
        and k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")
    }
    jupyter = base / "jupyter"
    env.update(
        HOME=str(base / "home"),
        # the kernel's `python` is this venv's, whatever PATH said
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        JUPYTER_CONFIG_DIR=str(jupyter / "config"),
        JUPYTER_DATA_DIR=str(jupyter / "data"),
        JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(jupyter / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(jupyter / "lab-workspaces"),
        IPYTHONDIR=str(base / "ipython"),
        OLLIE_BACKEND="offline",
        OLLIE_DATA_DIR=str(base / "ollie" / "data"),
        OLLIE_CONFIG_DIR=str(base / "ollie" / "config"),
        OLLIE_ENV_FILE=str(base / "ollie" / "config" / "env"),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    for name, settings in LAB_SETTINGS.items():
        path = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
    return env


def copy_notebooks(root: Path) -> Path:
    """notebooks/ copied into `root`, every output cleared: all that shows comes from this run."""
    target = root / "notebooks"
    shutil.copytree(
        REPO / "notebooks",
        target,
        ignore=shutil.ignore_patterns(".ollie", ".ipynb_checkpoints", "__pycache__"),
    )
    for path in target.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)
    return target


def api(lab: Lab, path: str, method: str = "GET") -> bytes:
    request = urllib.request.Request(
        f"{lab.url}{path}", method=method, headers={"Authorization": f"token {lab.token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.read()


def wait_for_server(lab: Lab, proc: subprocess.Popen[bytes]) -> None:

    def answers() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{lab.log_tail()}")
        try:
            api(lab, "api/status")
        except (urllib.error.URLError, OSError):
            return False
        return True

    try:
        wait_until(answers, SERVER_START, "jupyter lab to answer", interval=0.2)
    except AssertionError as exc:
        pytest.fail(f"{exc}:\n{lab.log_tail()}")


def stop_server(lab: Lab, proc: subprocess.Popen[bytes]) -> None:
    """Shut down through the API (kernels too); signal the process group if that hangs."""
    if proc.poll() is None:
        with contextlib.suppress(urllib.error.URLError, OSError):
            api(lab, "api/shutdown", method="POST")
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    # whatever the server started and left behind (a kernel, its MCP servers)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    root = tmp_path / "root"
    notebooks = copy_notebooks(root)
    if not (notebooks / QUICKSTART).exists():
        pytest.fail(f"notebooks/{QUICKSTART} is missing")
    port = free_port()
    lab = Lab(
        url=f"http://127.0.0.1:{port}/",
        token=secrets.token_hex(16),
        root=root,
        log=tmp_path / "jupyter-lab.log",
    )
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={lab.token}",
        f"--ServerApp.root_dir={root}",
    ]
    with lab.log.open("wb") as log:
        proc = subprocess.Popen(
            command,
            cwd=root,
            env=lab_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_server(lab, proc)
        yield lab
    finally:
        stop_server(lab, proc)


@pytest.fixture
def page(tmp_path: Path) -> Iterator[playwright.Page]:
    with playwright.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            tmp_path / "chromium-profile",
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(UI_TIMEOUT)
            playwright.expect.set_options(timeout=UI_TIMEOUT)
            yield page
        finally:
            context.close()


def plan_step_titles(path: Path) -> list[str]:
    """Step titles of the first `%%ollie` cell that asks for a plan (a goal line, then a list)."""
    for cell in nbformat.read(path, as_version=4).cells:
        lines = cell.source.splitlines()
        if cell.cell_type != "code" or not lines or not lines[0].startswith("%%ollie"):
            continue
        items = [
            m.group(1) for line in lines[2:] if (m := re.match(r"\s*(?:[-*]|\d+\.)\s+(.+)", line))
        ]
        if items:
            return [re.sub(r"\s*\([^)]*\)\s*$", "", item) for item in items]
    raise AssertionError(f"{path.name} has no %%ollie cell with a goal and a list of steps")


# True when every code cell has an execution count and the kernel is idle; "stopped" when the
# kernel is idle with nothing queued but cells left unrun: Run All stops at a cell's error.
FINISHED = """(count) => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const indicator = panel?.querySelector('.jp-Notebook-ExecutionIndicator');
    if (indicator?.dataset.status !== 'idle') return false;
    const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
        .map((e) => e.textContent.trim());
    const ran = prompts.filter((p) => /^\\[\\d+\\]:$/.test(p)).length;
    if (prompts.length === count && ran === count) return true;
    const queued = prompts.some((p) => p.includes('*'));
    return ran > 0 && !queued ? 'stopped' : false;
}"""


def wait_until_finished(page: playwright.Page, code_cells: int) -> None:
    try:
        state = page.wait_for_function(FINISHED, arg=code_cells, timeout=RUN_ALL_TIMEOUT)
    except playwright.TimeoutError:
        pytest.fail(f"the cells did not finish in {RUN_ALL_TIMEOUT / 1000:.0f} s: {progress(page)}")
    if state.json_value() is not True:  # the page answers true or "stopped"
        errors = page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
        pytest.fail(f"Run All stopped at an error: {progress(page)}\n" + "\n".join(errors))


def progress(page: playwright.Page) -> str:
    """The kernel status and the cells' prompts, for a failure message."""
    return page.evaluate(PROGRESS)


PROGRESS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    if (!panel) return 'no notebook is open';
    const status = panel.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status;
    const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
        .map((e) => e.textContent.trim() || '[ ]:');
    return `kernel ${status}; prompts ${prompts.join(' ')}`;
}"""


def run_all_cells(page: playwright.Page, panel: playwright.Locator) -> None:
    """Run > Run All Cells, on the notebook made current by a click on its first cell."""
    panel.locator(".jp-Cell .jp-InputPrompt").first.click()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    playwright.expect(panel.locator(".jp-CodeCell .jp-InputPrompt").first).not_to_have_text("[ ]:")


def add_cell_and_run(panel: playwright.Locator, source: str) -> None:
    """A new cell under the last one, typed and run with Ctrl+Enter, as a user would."""
    page = panel.page
    panel.locator(".jp-Cell .jp-InputPrompt").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.type(source)
    page.keyboard.press("Control+Enter")  # run; Shift+Enter would add one more cell
    playwright.expect(panel.locator(".jp-CodeCell .jp-InputPrompt").last).not_to_have_text("[ ]:")


def test_quickstart_draws_the_plan_graph_and_widgets_in_jupyterlab(
    lab: Lab, page: playwright.Page, tmp_path: Path
) -> None:
    notebook_path = lab.root / "notebooks" / QUICKSTART
    titles = plan_step_titles(notebook_path)
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(notebook_path, 4).cells)
    expect = playwright.expect

    page.goto(lab.page(f"lab/tree/notebooks/{QUICKSTART}"))
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    # The status bar says Idle once the kernel has started and answered; cells run before
    # that are skipped, not queued.
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible()
    run_all_cells(page, panel)
    wait_until_finished(page, code_cells)

    # The plan graph: graphviz's SVG inline in an output, one node per step.
    any_graph = page.locator(".jp-OutputArea-output svg")
    for title in titles:
        any_graph = any_graph.filter(has_text=title)
    graph = panel.locator(any_graph)
    expect(graph.first).to_be_attached()
    assert graph.first.locator("g.node").count() >= len(titles)

    # A widget view: the self-refreshing plan graph of `%ollie plan --watch`.
    add_cell_and_run(panel, WATCH_CELL)
    wait_until_finished(page, code_cells + 1)
    watch = (
        panel.locator(".jp-OutputArea-output .jupyter-widgets.widget-vbox")
        .filter(has=page.locator("svg"))
        .filter(has=page.locator(".widget-button", has_text="Stop watching"))
    )
    expect(watch.first).to_be_visible()
    expect(watch.first.locator(".widget-button", has_text="Stop watching")).to_be_visible()
    expect(watch.first).to_contain_text("steps done")
    assert page.get_by_text("Error displaying widget").count() == 0

    # The screenshot of the README: the first plan prompt and its graph.
    page.keyboard.press("Escape")
    page.keyboard.press("Control+b")  # hide the file browser
    expect(page.locator("#jp-left-stack")).to_be_hidden()
    cell = panel.locator(".jp-Cell").filter(has=any_graph).first
    cell.evaluate("(e) => e.scrollIntoView({block: 'start'})")
    expect(graph.first).to_be_in_viewport()
    # Always taken; it replaces the README's picture only when asked, so a test run
    # does not leave the checkout modified.
    target = (
        SCREENSHOT
        if os.environ.get("OLLIE_UPDATE_SCREENSHOT") == "1"
        else tmp_path / SCREENSHOT.name
    )
    target.parent.mkdir(exist_ok=True)
    page.screenshot(path=target)
    assert target.stat().st_size > 10_000  # a real picture, not an empty page
