"""Chat backends: one streaming interface over OpenAI-compatible, Anthropic, Ollama and offline."""

from __future__ import annotations

from ollie_nb.llm._anthropic import AnthropicBackend
from ollie_nb.llm._backend import Backend, HoldsSecrets, backend_secrets
from ollie_nb.llm._env import (
    DEFAULT_MODELS,
    backend_from_env,
    env_file_path,
    make_backend,
    ollie_env_file_path,
    openai_base_url,
)
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
