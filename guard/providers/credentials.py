"""API keys: from the settings, a key file, or the provider's environment variable.

The environment is passed in explicitly; the core never reads ``os.environ`` itself. Keys are
never logged or put into error messages.
"""

from __future__ import annotations

from collections.abc import Mapping

from guard.errors import ConfigError
from guard.settings import JudgeSettings, Provider

ENV_VARS: Mapping[Provider, str] = {
    Provider.OPENAI: "OPENAI_API_KEY",
    Provider.ANTHROPIC: "ANTHROPIC_API_KEY",
}


def env_var_for(provider: Provider) -> str | None:
    """The environment variable holding ``provider``'s key (None: it needs no key)."""
    return ENV_VARS.get(provider)


def resolve_api_key(
    settings: JudgeSettings, environ: Mapping[str, str], provider: Provider | None = None
) -> str | None:
    """The key for ``provider`` (default ``settings.provider``).

    Order: ``settings.api_key``, then ``settings.api_key_file``, then the provider's variable in
    ``environ``. None for providers that need no key, and for an OpenAI-compatible ``base_url``
    (local vLLM/Ollama servers usually take any key). :class:`ConfigError` when an LLM provider
    has none.
    """
    provider = provider or settings.provider
    if settings.api_key is not None:
        return _usable("judge.api_key", settings.api_key.get_secret_value())
    if settings.api_key_file is not None:
        return _usable("judge.api_key_file", _read_key_file(settings))
    var = env_var_for(provider)
    if var is None:
        return None
    key = environ.get(var, "").strip()
    if key:
        return _usable(var, key)
    if provider is Provider.OPENAI and settings.base_url is not None:
        return None
    raise ConfigError(
        "judge.api_key",
        f"no API key for the {provider.value} judge",
        f"set the {var} environment variable, judge.api_key "
        "(GROUNDGUARD_JUDGE__API_KEY) or judge.api_key_file",
    )


def _read_key_file(settings: JudgeSettings) -> str:
    path = settings.api_key_file
    assert path is not None
    try:
        key = path.read_text("utf-8").strip()
    except OSError as exc:
        raise ConfigError(
            "judge.api_key_file",
            f"cannot read {path} ({exc.strerror})",
            "point it at a readable file that holds only the key",
        ) from None
    if not key:
        raise ConfigError("judge.api_key_file", f"{path} is empty", "put the API key in the file")
    return key


def check_api_key_shape(key: str) -> str | None:
    """What keeps ``key`` out of an HTTP header (None: nothing): a character that is not
    printable ASCII, or whitespace. Says where, never what the key is."""
    for position, char in enumerate(key, 1):
        if not (char.isascii() and char.isprintable()) or char.isspace():
            kind = "whitespace" if char.isspace() else "not printable ASCII"
            return f"character {position} of the API key is {kind} (U+{ord(char):04X})"
    return None


def _usable(source: str, key: str) -> str:
    fault = check_api_key_shape(key)
    if fault is not None:
        raise ConfigError(
            source,
            f"{fault}: an API key is printable ASCII without spaces (the key is not shown)",
            "copy the key again without stray characters (quotes, line breaks, look-alikes)",
        )
    return key
