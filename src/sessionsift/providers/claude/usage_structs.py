"""The msgspec Structs `providers.claude.usage` decodes a candidate line with (only the fields a usage report
needs; every other field is skipped). Imported by providers.claude.usage at its first typed decode, so a
reading that needs none (providers.claude.usage.scan_file(light=True): a few appended lines) imports no
msgspec."""

from __future__ import annotations

import msgspec


class _CacheCreation(msgspec.Struct):
    ephemeral_5m_input_tokens: int | None = None
    ephemeral_1h_input_tokens: int | None = None


class _OutDetails(msgspec.Struct):
    thinking_tokens: int | None = None


class _Iteration(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_creation: _CacheCreation | None = None
    output_tokens_details: _OutDetails | None = None
    speed: str | None = None
    service_tier: str | None = None
    inference_geo: str | None = None
    iterations: list[_Iteration] | None = None


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _ModelUsage(msgspec.Struct):
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheReadInputTokens: int | None = None
    cacheCreationInputTokens: int | None = None
    costUSD: float | None = None


class _Line(msgspec.Struct):
    type: str | None = None
    timestamp: str | None = None
    message: _Message | None = None
    costUSD: float | None = None
    isSidechain: bool | None = None
    cwd: str | None = None
    totalCostUSD: float | None = None
    modelUsage: dict[str, _ModelUsage] | None = None


decode = msgspec.json.Decoder(_Line).decode
errors = (msgspec.ValidationError, msgspec.DecodeError)
