"""``generationConfig.reasoning``: how hard the model thinks, in each provider's request (pure).

Qwen Code's key is ``false`` (thinking off) or an object such as ``{"effort": "high"}`` or
``{"effort": "low", "budget_tokens": 5000}``.  What it adds to a request, as Qwen Code 0.24.4
sends it (``tests/e2e/test_reasoning.py`` compares the bodies):

OpenAI-compatible servers (:func:`openai_keys`)
  * an object goes in as ``reasoning`` unchanged, unless ``samplingParams`` is set (then the
    sampling keys are the whole say, as upstream documents);
  * on a GPT-5 or GPT-6 model the effort goes flat, as ``reasoning_effort`` (a sampling key of
    another name does not suppress it); on OpenRouter it stays nested;
  * on ``api.deepseek.com`` it goes flat too, ``low``/``medium`` read as ``high`` and ``xhigh``
    as ``max`` (DeepSeek's own mapping);
  * ``false`` sends ``thinking: {"type": "disabled"}`` to DeepSeek, ``reasoning: {"enabled":
    false}`` to OpenRouter and ``reasoning_effort: "none"`` to a GPT model that may think less,
    and nothing elsewhere;
  * a key the sampling settings or ``extra_body`` already set is never replaced.
Anthropic (:func:`anthropic_options`)
  ``budget_tokens`` turns extended thinking on with that budget (``model.thinkingBudget`` and
  ``--max-thinking-tokens`` win); ``effort`` is sent as ``output_config.effort`` (``xhigh`` and
  ``max`` read as ``high``, the Messages API's highest) with its beta header; ``false`` turns
  thinking off.  Upstream also thinks by default with a budget of its own; headwire does not.
Gemini (:func:`gemini_thinking`)
  ``effort`` becomes ``thinkingConfig.thinkingLevel`` (``low`` as ``LOW``, ``high`` and ``max``
  as ``HIGH``, any other as ``THINKING_LEVEL_UNSPECIFIED``) with thoughts included; ``false``
  asks for no thoughts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ANTHROPIC_EFFORT_BETA",
    "EFFORTS",
    "Reasoning",
    "anthropic_options",
    "gemini_thinking",
    "openai_keys",
]

Reasoning = Mapping[str, Any] | bool | None
"""``generationConfig.reasoning`` as read: ``False``, an object, or ``None`` (not set)."""

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""The effort tiers Qwen Code names."""

ANTHROPIC_EFFORT_BETA = "effort-2025-11-24"
"""The ``anthropic-beta`` flag that goes with ``output_config.effort``."""

_GPT = re.compile(r"(?:^|/)gpt-[56](?:[.\-]|$)", re.IGNORECASE)
"""A GPT-5 or GPT-6 model, also behind a router's prefix (``openai/gpt-5.1``)."""

_MUST_THINK = frozenset(
    {
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-5-pro",
        "gpt-5.1-codex",
        "gpt-5.1-codex-max",
        "gpt-5.2-codex",
        "gpt-5.3-codex",
        "gpt-5.2-pro",
        "gpt-5.4-pro",
        "gpt-5.5-pro",
        "gpt-6-astra",
    }
)
"""GPT models that always think: ``false`` sends them nothing (Qwen Code's list)."""

_DEEPSEEK_EFFORT = {"low": "high", "medium": "high", "xhigh": "max"}


def _host(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower().rstrip(".")


def _is(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def openai_keys(
    reasoning: Reasoning, model: str, base_url: str, sampling: Mapping[str, Any]
) -> dict[str, Any]:
    """The body keys ``reasoning`` adds to an OpenAI-compatible request for ``model`` at
    ``base_url`` (``sampling``: ``samplingParams``); see the module docstring."""
    if reasoning is None or reasoning is True:
        return {}
    host = _host(base_url)
    openrouter = _is(host, "openrouter.ai")
    deepseek = host == "api.deepseek.com"
    gpt = bool(_GPT.search(model))
    if reasoning is False:
        if deepseek:
            return {"thinking": {"type": "disabled"}}
        if gpt and model.lower().rpartition("/")[2] in _MUST_THINK:
            return {}
        if openrouter:
            return {"reasoning": {"enabled": False}}
        return {"reasoning_effort": "none"} if gpt else {}
    effort = reasoning.get("effort")
    if gpt:
        if openrouter:
            return {"reasoning": {"effort": effort}} if "reasoning" not in sampling else {}
        explicit = "reasoning_effort" in sampling or "reasoning" in sampling
        return {"reasoning_effort": effort} if isinstance(effort, str) and not explicit else {}
    if sampling:
        return {}  # the sampling keys are the whole say (upstream's rule)
    if deepseek:
        if not isinstance(effort, str):
            return {}
        return {"reasoning_effort": _DEEPSEEK_EFFORT.get(effort, effort)}
    return {"reasoning": dict(reasoning)}


def anthropic_options(reasoning: Reasoning) -> tuple[int | None, str | None, bool]:
    """``(thinking budget, output_config effort, thinking off)`` for an Anthropic request."""
    if reasoning is None or reasoning is True:
        return None, None, False
    if reasoning is False:
        return None, None, True
    budget = reasoning.get("budget_tokens")
    effort = reasoning.get("effort")
    if isinstance(effort, str):
        effort = effort if effort in ("low", "medium", "high") else "high"
    return (
        budget if type(budget) is int and budget > 0 else None,
        effort if isinstance(effort, str) else None,
        False,
    )


def gemini_thinking(reasoning: Reasoning) -> dict[str, Any] | None:
    """Gemini's ``thinkingConfig`` for ``reasoning``, or ``None`` (not set: the default)."""
    if reasoning is None or reasoning is True:
        return None
    if reasoning is False:
        return {"includeThoughts": False}
    effort = reasoning.get("effort")
    level = {"low": "LOW", "high": "HIGH", "max": "HIGH"}.get(str(effort))
    return {"includeThoughts": True, "thinkingLevel": level or "THINKING_LEVEL_UNSPECIFIED"}
