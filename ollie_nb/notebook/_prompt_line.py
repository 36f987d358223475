"""The options of a prompt line (`%ollie ask ...`, `%%ollie ...`): options first, then prose, kept verbatim."""

from __future__ import annotations

from dataclasses import dataclass

from IPython.core.error import UsageError

_FLAGS = {"--bg": "bg", "--inject": "inject", "-i": "interpolate", "--interpolate": "interpolate"}
_VALUED = {"--agent": "agent", "--model": "model"}
OPTIONS_HELP = "[--bg] [--inject] [--agent NAME] [--model M] [-i]"


@dataclass
class PromptOptions:
    """What the options before a prompt asked for."""

    bg: bool = False
    inject: bool = False
    agent: str = ""
    model: str = ""
    interpolate: bool = False


def parse_prompt_line(line: str, prog: str) -> tuple[PromptOptions, str]:
    """Options up to the first word that is not one (or `--`); the rest of the line verbatim.

    The prompt is prose: quotes, backslashes and `?` in it are the user's text, never syntax.
    """
    options = PromptOptions()
    rest = line.strip()
    while rest.startswith("-"):
        word, _, after = rest.partition(" ")
        word, _, inline = word.partition("=")
        rest = after.lstrip()
        if word == "--" and not inline:
            break
        if word in _FLAGS and not inline:
            setattr(options, _FLAGS[word], True)
        elif word in _VALUED:
            value = inline
            if not value:
                value, _, after = rest.partition(" ")
                rest = after.lstrip()
            if not value or value.startswith("-"):
                raise UsageError(f"{prog}: {word} needs a value")
            setattr(options, _VALUED[word], value)
        else:
            raise UsageError(
                f"{prog}: unknown option {word!r} (options: {OPTIONS_HELP}); "
                "put -- before a prompt that starts with '-'"
            )
    return options, rest
