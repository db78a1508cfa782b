"""Trusted folders, and the one table of what a project folder may set without trust.

A repository is data until its user says otherwise.  :data:`PROJECT_TABLE` lists every
settings key and every project file headwire reads from a working directory, and whether an
untrusted folder may set it; every reader of project-controlled files and keys asks
:func:`project_may` (settings loading, the agent folder, context files, skills, MCP servers
and hooks through their settings keys), and ``docs/security.md`` / ``docs/settings.md`` are
generated from it.
The default is *deny* for whatever widens access, changes accounting or limits, runs code or
chooses where requests and secrets go.  Project configuration that is denied is used only
when the project folder is trusted:

* listed in the user's trust list ``<data dir>/trusted.json`` (``{"folders": ["/abs/path"]}``;
  a folder trusts everything below it), which only the user writes (``headwire trust``);
* or the run says so: ``--trust-project``, or ``HEADWIRE_TRUST_PROJECT=1`` (for CI).

Otherwise that configuration is skipped with one note on stderr.  Whatever the trust, values
in project files never expand headwire's own credentials (see
:func:`headwire.runtime.environment.tool_environment`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from headwire.io.lines import open_regular
from headwire.records import dataclass
from headwire.runtime.store.storage import private_dir

TRUST_FILE = "trusted.json"
TRUST_ENV = "HEADWIRE_TRUST_PROJECT"
_TRUE = frozenset({"1", "true", "yes", "on"})


Who = Literal["any", "trusted", "narrowing", "user"]
"""Who may set an entry from a project folder: ``any`` folder; a ``trusted`` one only;
``narrowing``: a trusted one, or any folder for a value that only takes permissions away;
``user``: never a project (only the user settings and ``--settings``)."""


@dataclass(frozen=True, slots=True)
class ProjectEntry:
    """One row of the trust table: a dotted settings key or a project file, who may set it
    from a project folder, and why."""

    name: str
    kind: Literal["setting", "file"]
    who: Who
    why: str


SETTINGS_FILE_ENTRY = ".headwire/settings.json"
AGENTS_DIR_ENTRY = ".headwire/agents/*.md"
CONTEXT_FILES_ENTRY = "context files (QWEN.md, AGENTS.md, context.fileName)"
IGNORE_FILES_ENTRY = ".gitignore, .qwenignore"
SKILLS_DIR_ENTRY = ".headwire/skills, .qwen/skills, .claude/skills, .agents/skills"
OUTPUT_STYLES_DIR_ENTRY = ".headwire/output-styles, .qwen/output-styles, .claude/output-styles"
INTERFACE_KEYS = (
    *(
        f"general.{key}"
        for key in (
            "preferredEditor",
            "vimMode",
            "enableAutoUpdate",
            "showSessionRecap",
            "sessionRecapAwayThresholdMinutes",
            "voice",
            "cleanupPeriodDays",
            "language",
            "terminalBell",
            "preventSystemSleep",
            "gitCoAuthor",
        )
    ),
    "output.showTimestamps",
    "ui",
    "ide",
    "privacy",
    "review",
)
"""Qwen Code's settings of its own interface and of effects headwire does not reproduce: read
(so a Qwen Code settings file loads) and never used, so any folder may set them."""

PROJECT_TABLE: tuple[ProjectEntry, ...] = (
    ProjectEntry("$schema", "setting", "any", "names the schema for editors; changes nothing"),
    ProjectEntry(
        "model.name",
        "setting",
        "any",
        "picks a model the user set up (of the user's provider, or an entry of the user's "
        "modelProviders with its own server and key)",
    ),
    ProjectEntry(
        "model.maxSessionTurns", "setting", "trusted", "a limit of the run: raising it spends"
    ),
    ProjectEntry(
        "model.maxToolCalls", "setting", "trusted", "a limit of the run: raising it spends"
    ),
    ProjectEntry(
        "model.parseTextToolCalls",
        "setting",
        "trusted",
        "turns text in the model's answer (which a page or file can steer) into tool calls",
    ),
    ProjectEntry(
        "model.thinkingBudget", "setting", "trusted", "spends tokens: raising it costs more"
    ),
    ProjectEntry(
        "security.auth.selectedType",
        "setting",
        "trusted",
        "chooses which provider, and so which of the user's keys, the requests go to",
    ),
    ProjectEntry(
        "security.auth.baseUrl",
        "setting",
        "trusted",
        "chooses where requests, and the user's API key with them, are sent",
    ),
    ProjectEntry(
        "hooks", "setting", "trusted", "runs commands and reaches addresses on every event"
    ),
    ProjectEntry(
        "disableAllHooks",
        "setting",
        "trusted",
        "switches off the user's own hooks, which may be the checks that guard them",
    ),
    ProjectEntry(
        "stopHookBlockingCap",
        "setting",
        "trusted",
        "a limit of the run: how often Stop hooks may keep a turn going",
    ),
    ProjectEntry("skills.disabled", "setting", "any", "hides skills; no new access"),
    ProjectEntry("skills.defaultDisabled", "setting", "any", "hides skills; no new access"),
    ProjectEntry("skills.disabledLevels", "setting", "any", "skips skill folders; no new access"),
    ProjectEntry(
        "skills.enabled",
        "setting",
        "trusted",
        "offers skills the user switched off by default",
    ),
    ProjectEntry(
        "security.auth.apiKey",
        "setting",
        "user",
        "a secret: a repository's key would bill another account and read its traffic",
    ),
    ProjectEntry(
        "modelProviders",
        "setting",
        "user",
        "names which variable's secret is sent as the API key, and to which server",
    ),
    ProjectEntry(
        "providerProtocol",
        "setting",
        "user",
        "decides which protocol, and so which key and server, a provider id of modelProviders uses",
    ),
    ProjectEntry(
        "model.maxSubagentDepth",
        "setting",
        "trusted",
        "a limit of the run: deeper agents spend more",
    ),
    ProjectEntry(
        "modelFallbacks",
        "setting",
        "any",
        "picks models of the provider the user set up, priced by the user's table",
    ),
    ProjectEntry(
        "modelPricing",
        "setting",
        "trusted",
        "the prices cost and --max-budget-usd count with: a price of 0 would lift the budget",
    ),
    ProjectEntry(
        "tools.core", "setting", "any", "only narrows: tools it does not name are not offered"
    ),
    ProjectEntry(
        "tools.exclude", "setting", "any", "only narrows: tools and commands never offered"
    ),
    ProjectEntry(
        "tools.allowed", "setting", "trusted", "lets tools and commands run without asking"
    ),
    ProjectEntry(
        "tools.approvalMode",
        "setting",
        "narrowing",
        "`default` and `plan` only narrow; `auto-edit` and `yolo` run calls without asking",
    ),
    ProjectEntry(
        "tools.todoWrite.enabled",
        "setting",
        "any",
        "offers the model's task list; no new access",
    ),
    ProjectEntry(
        "tools.listDirectory.enabled",
        "setting",
        "any",
        "offers a listing tool confined to the workspace, as glob is",
    ),
    ProjectEntry(
        "tools.webFetch.allowPrivateNetwork",
        "setting",
        "user",
        "lets web_fetch reach loopback, the local network and cloud metadata",
    ),
    ProjectEntry(
        "tools.executionSandbox.backend",
        "setting",
        "user",
        "the sandbox's backend: a project can neither set nor weaken it",
    ),
    ProjectEntry(
        "tools.executionSandbox.filesystem",
        "setting",
        "user",
        "what sandboxed commands may write: a project can neither set nor weaken it",
    ),
    ProjectEntry(
        "tools.executionSandbox.network",
        "setting",
        "user",
        "what sandboxed commands may reach: a project can neither set nor weaken it",
    ),
    ProjectEntry(
        "tools.executionSandbox.hideHome",
        "setting",
        "user",
        "hides the user's home from sandboxed commands: a project cannot lift it",
    ),
    ProjectEntry(
        "context.fileName",
        "setting",
        "trusted",
        "chooses files, also in the user's data folder, sent to the provider unasked",
    ),
    ProjectEntry(
        "model.generationConfig.contextWindowSize",
        "setting",
        "trusted",
        "how often the conversation is summarized: a small window spends on summary calls",
    ),
    ProjectEntry(
        "model.generationConfig.timeout",
        "setting",
        "trusted",
        "how long a model request may wait: a tiny one fails every call",
    ),
    ProjectEntry(
        "model.generationConfig.streamIdleTimeoutMs",
        "setting",
        "trusted",
        "how long a streamed answer may stall: a tiny one fails every call",
    ),
    ProjectEntry(
        "model.generationConfig.maxRetries",
        "setting",
        "trusted",
        "how often a failed call is sent again: each attempt may be billed",
    ),
    ProjectEntry(
        "model.generationConfig.retryInitialDelayMs",
        "setting",
        "trusted",
        "how long a run waits before a retry",
    ),
    ProjectEntry(
        "model.generationConfig.retryMaxDelayMs",
        "setting",
        "trusted",
        "how long a run waits before a retry",
    ),
    ProjectEntry(
        "model.generationConfig.customHeaders",
        "setting",
        "user",
        "headers of every model request, the API key's among them: a project could replace it",
    ),
    ProjectEntry(
        "model.generationConfig.samplingParams",
        "setting",
        "trusted",
        "what every model request asks for (max_tokens, n): spends on output",
    ),
    ProjectEntry(
        "model.generationConfig.toolResultContentFormat",
        "setting",
        "any",
        "only the form of tool results in the request; no access, no spending",
    ),
    ProjectEntry(
        "model.generationConfig.modalities",
        "setting",
        "any",
        "read and not used: no media reaches a model",
    ),
    ProjectEntry(
        "model.generationConfig.splitToolMedia",
        "setting",
        "any",
        "read and not used: tools return text only",
    ),
    ProjectEntry(
        "model.generationConfig.enableRequestMetadata",
        "setting",
        "any",
        "read and not used: no tracing object is sent",
    ),
    ProjectEntry(
        "model.generationConfig.schemaCompliance",
        "setting",
        "any",
        "read, with its one value: Gemini's tool schemas go as JSON Schema",
    ),
    ProjectEntry(
        "model.generationConfig.reasoning",
        "setting",
        "trusted",
        "how hard every model call thinks: a higher effort spends on thinking tokens",
    ),
    ProjectEntry(
        "model.generationConfig.enableCacheControl",
        "setting",
        "trusted",
        "whether prompts are cached: off, every call pays for its whole prompt",
    ),
    ProjectEntry(
        "model.generationConfig.extra_body",
        "setting",
        "trusted",
        "more keys of every model request (service_tier, n): spends on output",
    ),
    ProjectEntry(
        "context.autoCompactThreshold",
        "setting",
        "trusted",
        "how often the conversation is summarized: a low threshold spends on summary calls",
    ),
    ProjectEntry(
        "context.clearContextOnIdle.toolResultsThresholdMinutes",
        "setting",
        "any",
        "only which old tool results the model still sees; no access, no spending",
    ),
    ProjectEntry(
        "context.clearContextOnIdle.toolResultsNumToKeep",
        "setting",
        "any",
        "only which old tool results the model still sees; no access, no spending",
    ),
    ProjectEntry(
        "context.clearContextOnIdle.toolResultsTotalCharsThreshold",
        "setting",
        "any",
        "only which old tool results the model still sees; no access, no spending",
    ),
    ProjectEntry(
        "env",
        "setting",
        "trusted",
        "sets variables for headwire and its tools, such as where requests go",
    ),
    ProjectEntry("mcpServers", "setting", "trusted", "starts processes and opens connections"),
    ProjectEntry(
        "telemetry.enabled",
        "setting",
        "user",
        "sends the run's spans, logs and metrics out",
    ),
    ProjectEntry(
        "telemetry.target",
        "setting",
        "user",
        "a label of the telemetry destination, kept with the other telemetry keys",
    ),
    ProjectEntry(
        "telemetry.otlpEndpoint",
        "setting",
        "user",
        "chooses where the run's telemetry goes",
    ),
    ProjectEntry(
        "telemetry.otlpProtocol",
        "setting",
        "user",
        "how the run's telemetry is sent, kept with the other telemetry keys",
    ),
    ProjectEntry(
        "telemetry.logPrompts",
        "setting",
        "user",
        "puts prompts and tool arguments into exported telemetry",
    ),
    ProjectEntry(
        "telemetry.outfile",
        "setting",
        "user",
        "chooses a file telemetry is written to",
    ),
    ProjectEntry(
        "telemetry.otlpTracesEndpoint", "setting", "user", "chooses where the run's spans go"
    ),
    ProjectEntry(
        "telemetry.otlpLogsEndpoint", "setting", "user", "chooses where the run's log records go"
    ),
    ProjectEntry(
        "telemetry.otlpMetricsEndpoint", "setting", "user", "chooses where the run's metrics go"
    ),
    ProjectEntry(
        "telemetry.userId",
        "setting",
        "user",
        "puts a user's identity into exported telemetry",
    ),
    ProjectEntry(
        "telemetry.includeSensitiveSpanAttributes",
        "setting",
        "user",
        "puts prompts, file contents and commands into exported spans",
    ),
    ProjectEntry(
        "telemetry.sensitiveSpanAttributeMaxLength",
        "setting",
        "user",
        "how much content exported spans keep, kept with the other telemetry keys",
    ),
    ProjectEntry(
        "telemetry.resourceAttributes",
        "setting",
        "user",
        "labels every exported record, kept with the other telemetry keys",
    ),
    ProjectEntry(
        "telemetry.metrics.includeSessionId",
        "setting",
        "user",
        "what exported metrics carry, kept with the other telemetry keys",
    ),
    ProjectEntry(
        "outboundCorrelation.propagateTraceContext",
        "setting",
        "user",
        "hands the run's trace context to the commands it starts",
    ),
    ProjectEntry(
        "outboundCorrelation.allowDynamicHeaderValues",
        "setting",
        "user",
        "consent to send the session id to the servers custom headers name",
    ),
    ProjectEntry(
        SETTINGS_FILE_ENTRY,
        "file",
        "any",
        "read in every folder (a regular file, at most 4 MiB); each key as this table says",
    ),
    ProjectEntry(
        "general.chatRecording",
        "setting",
        "trusted",
        "switches off the session record the user reviews, resumes and audits a run by",
    ),
    ProjectEntry(
        "general.defaultFileEncoding",
        "setting",
        "trusted",
        "puts a byte order mark before every file the tools create (before a script's #!, "
        "which then no longer runs)",
    ),
    ProjectEntry(
        "general.outputStyle",
        "setting",
        "trusted",
        "picks the style every answer is written in (Proactive: start work without asking on "
        "low-risk choices)",
    ),
    ProjectEntry(
        "general.outputLanguage",
        "setting",
        "any",
        "one line of text for the model, as a context file is (at most 80 characters)",
    ),
    ProjectEntry(
        "output.format",
        "setting",
        "trusted",
        "puts the whole conversation (what the tools read and printed) on stdout where a "
        "script expected only the answer, which may be a public log",
    ),
    *(
        ProjectEntry(name, "setting", "any", "a Qwen Code key headwire reads and does not apply")
        for name in INTERFACE_KEYS
    ),
    ProjectEntry(
        AGENTS_DIR_ENTRY,
        "file",
        "trusted",
        "subagent definitions: prompts, tools and models the agent tool runs",
    ),
    ProjectEntry(
        SKILLS_DIR_ENTRY,
        "file",
        "trusted",
        "skills: instructions the model follows and tools it is told to use",
    ),
    ProjectEntry(
        OUTPUT_STYLES_DIR_ENTRY,
        "file",
        "trusted",
        "output styles: instructions in the system prompt and in every turn (never through "
        "a symbolic or hard link)",
    ),
    ProjectEntry(
        CONTEXT_FILES_ENTRY,
        "file",
        "any",
        "text for the model, read from the working directory up to the repository root: "
        "a regular file that stays inside the folder it is found in, at most 1 MiB; "
        "others are skipped with a note",
    ),
    ProjectEntry(
        IGNORE_FILES_ENTRY,
        "file",
        "any",
        "only hide files from glob and list_directory; read only as a regular file inside "
        "its folder (a FIFO or a link out is skipped)",
    ),
)
"""Every setting and project file a working directory can supply, and who may set it."""

NARROWING_VALUES: Mapping[str, tuple[Any, ...]] = {"tools.approvalMode": ("default", "plan")}
"""The values of ``narrowing`` entries an untrusted folder may set (they only take away)."""

_BY_NAME = {entry.name: entry for entry in PROJECT_TABLE}
_MISSING: Any = object()


def project_entry(name: str) -> ProjectEntry:
    """The table's row for ``name``; a name the table does not know is a ``KeyError`` (a new
    setting or project file must be decided before anything reads it)."""
    return _BY_NAME[name]


def project_may(name: str, trusted: bool, value: Any = _MISSING) -> bool:
    """Whether a project folder's ``name`` (with ``value``, for ``narrowing`` entries) is used,
    given whether the folder is ``trusted``: the one check every reader makes."""
    who = project_entry(name).who
    if who == "any":
        return True
    if who == "user":
        return False
    if trusted:
        return True
    return who == "narrowing" and value is not _MISSING and value in NARROWING_VALUES[name]


def project_settings(who: Who) -> tuple[str, ...]:
    """The dotted settings keys of the table with ``who``."""
    return tuple(e.name for e in PROJECT_TABLE if e.kind == "setting" and e.who == who)


def resolve_inside(path: Path, folder: Path) -> str:
    """``path``'s real path (links resolved) when it stays inside ``folder``'s real path;
    otherwise ``OSError`` saying where it leads.  The one confinement check for files a
    project supplies (context files, the project settings file)."""
    inner = os.path.realpath(folder)
    real = os.path.realpath(path)
    if os.path.commonpath([inner, real]) != inner:
        raise OSError(f"it leads outside {folder} (to {real})")
    return real


def read_project_file(path: Path, folder: Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a file a project supplies (a context file, an ignore
    file): read only when its real path stays inside ``folder`` (:func:`resolve_inside`) and
    it is a regular file, so a link to a secret, a FIFO or a device is never read and opening
    never blocks.  ``FileNotFoundError`` when it is absent, ``OSError`` saying why otherwise."""
    real = resolve_inside(path, folder)
    with os.fdopen(open_regular(real, follow_symlinks=False), "rb") as handle:
        return handle.read(limit + 1)


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def trusted_folders(data_dir: Path) -> list[Path]:
    """The folders of the user's trust list (an unreadable or malformed list trusts none)."""
    try:
        data = json.loads((data_dir / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return []
    return [_real(f) for f in folders if isinstance(f, str) and os.path.isabs(f)]


def is_trusted(
    project: Path,
    data_dir: Path,
    *,
    flag: bool = False,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Whether ``project``'s own configuration may be used."""
    env = os.environ if env is None else env
    if flag or env.get(TRUST_ENV, "").strip().lower() in _TRUE:
        return True
    real = _real(project)
    folders = trusted_folders(data_dir)
    return any(real == folder or real.is_relative_to(folder) for folder in folders)


def add_trusted(project: Path, data_dir: Path) -> Path:
    """Add ``project`` to the trust list (created 0600 in a 0700 folder); returns the entry."""
    real = _real(project)
    folders = [str(f) for f in trusted_folders(data_dir)]
    if str(real) not in folders:
        folders.append(str(real))
    private_dir(data_dir)
    path = data_dir / TRUST_FILE
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"folders": folders}, out, indent=2)
        out.write("\n")
    os.replace(tmp, path)
    return real


def untrusted_note(what: str, project: Path) -> str:
    """The one stderr line for skipped project configuration."""
    return (
        f"headwire: note: {what} skipped: {project} is not a trusted folder "
        f"(trust it with 'headwire trust', --trust-project or {TRUST_ENV}=1)"
    )


__all__ = [
    "AGENTS_DIR_ENTRY",
    "CONTEXT_FILES_ENTRY",
    "IGNORE_FILES_ENTRY",
    "NARROWING_VALUES",
    "OUTPUT_STYLES_DIR_ENTRY",
    "PROJECT_TABLE",
    "SETTINGS_FILE_ENTRY",
    "SKILLS_DIR_ENTRY",
    "TRUST_ENV",
    "TRUST_FILE",
    "ProjectEntry",
    "Who",
    "add_trusted",
    "is_trusted",
    "project_entry",
    "project_may",
    "project_settings",
    "read_project_file",
    "resolve_inside",
    "trusted_folders",
    "untrusted_note",
]
