"""Chat backends: one streaming interface over OpenAI-compatible, Anthropic, Ollama and offline.

A name loads its module on first use (PEP 562): a provider loads when it is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ollie_nb._lazy import lazy_names

if TYPE_CHECKING:
    from ollie_nb.llm._anthropic import AnthropicBackend
    from ollie_nb.llm._backend import Backend, HoldsSecrets, backend_secrets
    from ollie_nb.llm._errors import (
        ContextOverflowError,
        LLMConfigError,
        LLMConnectionError,
        LLMError,
        LLMHTTPError,
        LLMStreamError,
        MissingExtraError,
        ToolUseFailedError,
    )
    from ollie_nb.llm._offline import (
        OfflineBackend,
        Turn,
        TurnFunction,
        is_step_prompt,
        step_prompt_task_id,
    )
    from ollie_nb.llm._ollama import OllamaBackend
    from ollie_nb.llm._openai import OpenAIBackend
    from ollie_nb.llm._prices import PriceSource, price_source, priced
    from ollie_nb.llm._retry import RetryPolicy, first_error_hook
    from ollie_nb.llm._settings import (
        DEFAULT_MODELS,
        backend_from_env,
        env_file_path,
        make_backend,
        ollie_env_file_path,
        openai_base_url,
    )
    from ollie_nb.llm._types import (
        Done,
        GenerationParams,
        ImagePart,
        Message,
        ReasoningDelta,
        RetryNotice,
        StreamEvent,
        TextDelta,
        ThinkingBlock,
        ThinkingReady,
        ToolCall,
        ToolCallsReady,
        ToolDef,
        Usage,
        UsageReport,
    )

# Where each public name lives; `__getattr__` imports its module when the name is first used.
_HOMES: dict[str, tuple[str, ...]] = {
    "ollie_nb.llm._anthropic": ("AnthropicBackend",),
    "ollie_nb.llm._backend": ("Backend", "HoldsSecrets", "backend_secrets"),
    "ollie_nb.llm._errors": (
        "ContextOverflowError",
        "LLMConfigError",
        "LLMConnectionError",
        "LLMError",
        "LLMHTTPError",
        "LLMStreamError",
        "MissingExtraError",
        "ToolUseFailedError",
    ),
    "ollie_nb.llm._offline": (
        "OfflineBackend",
        "Turn",
        "TurnFunction",
        "is_step_prompt",
        "step_prompt_task_id",
    ),
    "ollie_nb.llm._ollama": ("OllamaBackend",),
    "ollie_nb.llm._openai": ("OpenAIBackend",),
    "ollie_nb.llm._prices": ("PriceSource", "price_source", "priced"),
    "ollie_nb.llm._retry": ("RetryPolicy", "first_error_hook"),
    "ollie_nb.llm._settings": (
        "DEFAULT_MODELS",
        "backend_from_env",
        "env_file_path",
        "make_backend",
        "ollie_env_file_path",
        "openai_base_url",
    ),
    "ollie_nb.llm._types": (
        "Done",
        "GenerationParams",
        "ImagePart",
        "Message",
        "ReasoningDelta",
        "RetryNotice",
        "StreamEvent",
        "TextDelta",
        "ThinkingBlock",
        "ThinkingReady",
        "ToolCall",
        "ToolCallsReady",
        "ToolDef",
        "Usage",
        "UsageReport",
    ),
}
__all__ = [
    "DEFAULT_MODELS",
    "AnthropicBackend",
    "Backend",
    "ContextOverflowError",
    "Done",
    "GenerationParams",
    "HoldsSecrets",
    "ImagePart",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "LLMStreamError",
    "Message",
    "MissingExtraError",
    "OfflineBackend",
    "OllamaBackend",
    "OpenAIBackend",
    "PriceSource",
    "ReasoningDelta",
    "RetryNotice",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingReady",
    "ToolCall",
    "ToolCallsReady",
    "ToolDef",
    "ToolUseFailedError",
    "Turn",
    "TurnFunction",
    "Usage",
    "UsageReport",
    "backend_from_env",
    "backend_secrets",
    "env_file_path",
    "first_error_hook",
    "is_step_prompt",
    "make_backend",
    "ollie_env_file_path",
    "openai_base_url",
    "price_source",
    "priced",
    "step_prompt_task_id",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
