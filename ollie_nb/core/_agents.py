"""Agent discovery: named agents in the user's dirs and the project's, and trust in project agents.

A name is looked up in the user's agents dir first, then in the project's
`.ollie/agents`: a cloned repository cannot shadow the user's own agent of the
same name. A project agent found by name runs hooks and sets trust, so it is
used only once the user has trusted that file as it is now (its content hash);
a changed file must be trusted again, on every route (`%ollie resume` loads a
session's recorded project agent only when it is trusted as it is now). A bare name
(no `.json`, no directory) is looked up in the agent dirs only, never as a file of the
work dir. A path the user types is the user's choice.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ollie_nb.core._config import AgentConfig, load_agent_config
from ollie_nb.errors import ConfigError

TRUST_FILE = "trusted-agents.json"


class UntrustedAgentError(ConfigError):
    """A project-local agent was asked for by name and the user has not trusted it yet."""

    def __init__(self, path: Path, config: AgentConfig) -> None:
        hooks = "; ".join(f"{e}: {' && '.join(c)}" for e, c in config.hooks.items()) or "none"
        trusted = ", ".join(config.trusted_tools) if config.trusted_tools is not None else "none"
        commands = f"; prompt commands: {' && '.join(config.prompt_commands)}"
        super().__init__(
            f"{path} is a project agent not trusted yet (hooks: {hooks}; trustedTools: "
            f"{trusted}{commands if config.prompt_commands else ''}); read it, then trust it "
            f"with %ollie agent {config.name} --trust"
        )
        self.path = path
        self.config = config


def user_config_dir() -> Path:
    """`$OLLIE_CONFIG_DIR`, else the platform's user config dir for ollie_nb."""
    import platformdirs

    return Path(
        os.environ.get("OLLIE_CONFIG_DIR")
        or platformdirs.user_config_dir("ollie_nb", appauthor=False)
    )


def user_agent_dirs() -> list[Path]:
    """The user's own agents: ollie_nb's config dir, then ollie's (`~/.config/ollie/agents`).

    ollie keeps agents in its config dir, so an ollie user's agents are found by name;
    ollie_nb's own dir (or `$OLLIE_CONFIG_DIR`) wins on a clash.
    """
    ollie = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "ollie"
    return list(dict.fromkeys([user_config_dir() / "agents", ollie / "agents"]))


def project_agent_dir(workdir: str) -> Path:
    return Path(workdir) / ".ollie" / "agents"


def agent_dirs(workdir: str) -> list[Path]:
    """Where named agents are looked up, in order: the user's dirs, then the project's."""
    return [*user_agent_dirs(), project_agent_dir(workdir)]


def list_agents(workdir: str) -> list[str]:
    """Names of the agents found in agent_dirs, plus `default`."""
    names = {"default"}
    for directory in agent_dirs(workdir):
        if directory.is_dir():
            names.update(p.stem for p in directory.glob("*.json"))
    return sorted(names)


def resolve_agent(spec: Any, workdir: str, *, trust: bool = False) -> AgentConfig:
    """An agent config from a name (looked up in agent_dirs), a JSON path, or a config.

    A project agent found by name must be trusted (`trust=True` records that the user
    does); otherwise UntrustedAgentError says what it would run. The prompt commands of
    the config run (in `workdir`) only once it is found and trusted.
    """
    return _find_agent(spec, workdir, trust=trust).with_prompt_commands_run(workdir)


def _find_agent(spec: Any, workdir: str, *, trust: bool) -> AgentConfig:
    if isinstance(spec, AgentConfig):
        return spec
    if spec is None or spec == "default":
        return AgentConfig()
    text = os.fspath(spec)
    path = Path(text).expanduser()
    if text.endswith(".json") or os.sep in text or "/" in text:
        return load_agent_config(path if path.is_absolute() else Path(workdir) / path)
    for directory in user_agent_dirs():
        if (directory / f"{text}.json").exists():
            return load_agent_config(directory / f"{text}.json", name=text)
    candidate = project_agent_dir(workdir) / f"{text}.json"
    if candidate.exists():
        config = load_agent_config(candidate, name=text)
        if trust:
            trust_agent_file(candidate)
        elif not agent_file_trusted(candidate):
            raise UntrustedAgentError(candidate, config)
        return config
    known = ", ".join(list_agents(workdir)) or "none"
    raise ConfigError(f"no agent named {text!r} (agents: {known}; or give a path to a JSON file)")


def is_project_agent(path: Path) -> bool:
    """Whether an agent file lies in a project's `.ollie/agents` (not the user's own dirs)."""
    resolved = path.resolve()
    if any(resolved.parent == d.resolve() for d in user_agent_dirs()):
        return False
    return resolved.parent.name == "agents" and resolved.parent.parent.name == ".ollie"


def require_trusted(path: str | os.PathLike[str]) -> None:
    """Raise UntrustedAgentError unless `path`, when a project agent, is trusted as it is now."""
    file = Path(path)
    if file.is_file() and is_project_agent(file) and not agent_file_trusted(file):
        raise UntrustedAgentError(file, load_agent_config(file, name=file.stem))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _trusted_files() -> dict[str, str]:
    try:
        data = json.loads((user_config_dir() / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def agent_file_trusted(path: Path) -> bool:
    """Whether the user trusted this agent file with exactly its present content."""
    return _trusted_files().get(str(path.resolve())) == _digest(path)


def trust_agent_file(path: Path) -> None:
    """Record that the user trusts this agent file as it is now."""
    trusted = _trusted_files()
    trusted[str(path.resolve())] = _digest(path)
    target = user_config_dir() / TRUST_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(trusted, indent=1), encoding="utf-8")
    os.replace(tmp, target)
