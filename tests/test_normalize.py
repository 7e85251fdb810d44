"""Provider payload normalization (docs/normalization.md): usage shapes, TokensUsage, messages."""

from __future__ import annotations

import json

import pytest

from profiler_core import (
    Message,
    ProfilerError,
    TokenBreakdown,
    TokensUsage,
    ToolCall,
    ToolCallFunction,
    normalize_messages,
    normalize_usage,
    tokens_usage,
)

# -- realistic usage payloads (one underlying call seen through different APIs) ---------

# An o-series call: 2006 prompt tokens of which 1920 were a cache hit; 300 completion tokens
# of which 256 were reasoning.
OPENAI_CHAT = {
    "prompt_tokens": 2006,
    "completion_tokens": 300,
    "total_tokens": 2306,
    "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 256,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}
# The same call through langchain-openai's usage_metadata.
LANGCHAIN_OPENAI = {
    "input_tokens": 2006,
    "output_tokens": 300,
    "total_tokens": 2306,
    "input_token_details": {"audio": 0, "cache_read": 1920},
    "output_token_details": {"audio": 0, "reasoning": 256},
}
OPENAI_RESPONSES = {
    "input_tokens": 5120,
    "input_tokens_details": {"cached_tokens": 4096},
    "output_tokens": 900,
    "output_tokens_details": {"reasoning_tokens": 640},
    "total_tokens": 6020,
}
# Anthropic: input_tokens EXCLUDES the 18430 cache-read and 2051 cache-write tokens.
ANTHROPIC = {
    "input_tokens": 42,
    "cache_creation_input_tokens": 2051,
    "cache_read_input_tokens": 18430,
    "output_tokens": 733,
    "cache_creation": {
        "ephemeral_5m_input_tokens": 2051,
        "ephemeral_1h_input_tokens": 0,
    },
    "server_tool_use": {"web_search_requests": 0},
    "service_tier": "standard",
}
# The same call through langchain-anthropic: input_tokens INCLUDES both caches.
LANGCHAIN_ANTHROPIC = {
    "input_tokens": 20523,
    "output_tokens": 733,
    "total_tokens": 21256,
    "input_token_details": {"cache_read": 18430, "cache_creation": 2051},
}
PLAIN = {"input_tokens": 120, "output_tokens": 80, "total_tokens": 200}


def test_openai_chat_splits_cached_and_reasoning_out_of_the_inclusive_counts():
    tb = normalize_usage(OPENAI_CHAT)
    assert tb == TokenBreakdown(input=86, cache_read=1920, output=44, reasoning=256)
    # Nothing double-counted: our total is exactly what OpenAI billed.
    assert tb.total == OPENAI_CHAT["total_tokens"] == 2306
    assert tb.active == 86 + 44 + 256


def test_openai_responses_api():
    tb = normalize_usage(OPENAI_RESPONSES)
    assert tb == TokenBreakdown(input=1024, cache_read=4096, output=260, reasoning=640)
    assert tb.total == OPENAI_RESPONSES["total_tokens"]


def test_anthropic_input_excludes_cache_so_nothing_is_subtracted():
    tb = normalize_usage(ANTHROPIC)
    assert tb == TokenBreakdown(
        input=42, cache_read=18430, cache_write=2051, output=733
    )
    assert tb.total == 42 + 18430 + 2051 + 733


def test_anthropic_cache_write_from_the_ttl_split_only():
    tb = normalize_usage(
        {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_read_input_tokens": 0,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 100,
                "ephemeral_1h_input_tokens": 50,
            },
        }
    )
    assert tb.cache_write == 150 and tb.input == 10


def test_langchain_usage_metadata_matches_the_native_payloads():
    assert normalize_usage(LANGCHAIN_OPENAI) == normalize_usage(OPENAI_CHAT)
    assert normalize_usage(LANGCHAIN_ANTHROPIC) == normalize_usage(ANTHROPIC)


def test_langchain_ttl_split_cache_creation():
    tb = normalize_usage(
        {
            "input_tokens": 1000,
            "output_tokens": 10,
            "input_token_details": {
                "cache_read": 0,
                "ephemeral_5m_input_tokens": 300,
                "ephemeral_1h_input_tokens": 200,
            },
        }
    )
    assert (tb.input, tb.cache_write) == (500, 500)


def test_plain_seed_usage():
    assert normalize_usage(PLAIN) == TokenBreakdown(input=120, output=80)


def test_camel_case_token_breakdown_json(parity_dir):
    tokens = json.loads((parity_dir / "prompt-result.json").read_text())["metrics"][
        "tokens"
    ]
    tb = normalize_usage(tokens)
    assert (tb.input, tb.output, tb.reasoning, tb.cache_read, tb.cache_write) == (
        14000,
        2200,
        1800,
        9000,
        1500,
    )
    assert normalize_usage({"input": 3, "cacheRead": 4}) == TokenBreakdown(
        input=3, cache_read=4
    )


def test_camel_case_breakdown_with_a_wrong_total_is_refused():
    with pytest.raises(ProfilerError, match=r"usage\.total: 999 != 7"):
        normalize_usage({"input": 3, "cacheRead": 4, "total": 999})


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            {
                "id": "chatcmpl-9x",
                "object": "chat.completion",
                "model": "o3-mini",
                "choices": [],
                "usage": OPENAI_CHAT,
            },
            TokenBreakdown(input=86, cache_read=1920, output=44, reasoning=256),
        ),
        (
            {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "content": [],
                "usage": ANTHROPIC,
            },
            TokenBreakdown(input=42, cache_read=18430, cache_write=2051, output=733),
        ),
        (
            {"type": "ai", "content": "ok", "usage_metadata": LANGCHAIN_ANTHROPIC},
            TokenBreakdown(input=42, cache_read=18430, cache_write=2051, output=733),
        ),
    ],
)
def test_whole_responses_are_unwrapped(response, expected):
    assert normalize_usage(response) == expected


def test_sdk_objects_with_model_dump():
    class CompletionUsage:  # the shape of openai's pydantic object
        def model_dump(self):
            return dict(OPENAI_CHAT)

    assert normalize_usage(CompletionUsage()).cache_read == 1920


def test_provider_forces_the_shape():
    # Without cache fields an Anthropic payload looks "plain"; forcing it must still work.
    assert normalize_usage(
        {"input_tokens": 100, "output_tokens": 50}, provider="anthropic"
    ) == TokenBreakdown(input=100, output=50)
    assert normalize_usage(LANGCHAIN_OPENAI, provider="langgraph") == normalize_usage(
        OPENAI_CHAT
    )
    with pytest.raises(ProfilerError, match=r"usage\.prompt_tokens: missing"):
        normalize_usage(ANTHROPIC, provider="openai")
    with pytest.raises(ProfilerError, match=r"unknown usage provider 'gemini'"):
        normalize_usage(PLAIN, provider="gemini")


def test_null_details_count_as_zero_and_integral_floats_are_counts():
    tb = normalize_usage(
        {
            "prompt_tokens": 10.0,
            "completion_tokens": 5,
            "prompt_tokens_details": None,
            "completion_tokens_details": None,
        }
    )
    assert tb == TokenBreakdown(input=10, output=5)
    assert isinstance(tb.input, int)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"foo": 1}, r"usage: unrecognised keys \{'foo'\}; expected OpenAI"),
        (
            {"input_tokens": 3, "output_tokens": 4, "foo": 1},
            r"unrecognised keys \{'foo'\}",
        ),
        ({}, r"usage: empty usage object"),
        ([1, 2], r"usage: expected a usage object, got list"),
        (None, r"usage: expected a usage object, got NoneType"),
        (
            {"prompt_tokens": "10", "completion_tokens": 5},
            r"usage\.prompt_tokens: expected a token count .* got '10'",
        ),
        (
            {"prompt_tokens": True, "completion_tokens": 5},
            r"usage\.prompt_tokens: expected a token count",
        ),
        (
            {"input_tokens": -1, "output_tokens": 5},
            r"usage\.input_tokens: expected a token count",
        ),
        (
            {"input_tokens": 1.5, "output_tokens": 5},
            r"usage\.input_tokens: expected a token count",
        ),
        (
            {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 11},
            },
            r"cached_tokens \(11\) exceeds prompt_tokens \(10\)",
        ),
        (
            {
                "input_tokens": 10,
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 6},
            },
            r"reasoning_tokens \(6\) exceeds output_tokens \(5\)",
        ),
        (
            {
                "input_tokens": 10,
                "output_tokens": 5,
                "input_token_details": {"cache_read": 8, "cache_creation": 3},
            },
            r"cache_read \+ cache_creation \(11\) exceeds input_tokens \(10\)",
        ),
        (
            {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 20},
            r"usage\.total_tokens: 20 != prompt_tokens \+ completion_tokens \(15\)",
        ),
        (
            {"input_tokens": 10, "output_tokens": 5, "total_tokens": 14},
            r"total_tokens: 14 != input_tokens",
        ),
        (
            {"prompt_tokens": 1, "completion_tokens": 1, "prompt_tokens_details": 7},
            r"prompt_tokens_details: expected an object",
        ),
        ({"input_tokens": 1}, r"usage\.output_tokens: missing"),
    ],
)
def test_bad_usage_names_what_was_not_understood(raw, message):
    with pytest.raises(ProfilerError, match=message):
        normalize_usage(raw)


def test_where_prefixes_errors():
    with pytest.raises(ProfilerError, match=r"^run-3\.json: usage: unrecognised keys"):
        normalize_usage({"foo": 1}, where="run-3.json: usage")


# -- TokensUsage -----------------------------------------------------------------


def test_tokens_usage_view_counts_every_token_once():
    tb = normalize_usage(ANTHROPIC)
    usage = tokens_usage(tb)
    assert usage == TokensUsage.from_breakdown(tb)
    assert usage.input_tokens == 42 + 18430 + 2051
    assert usage.output_tokens == 733
    assert usage.total_tokens == tb.total
    assert usage.to_dict() == {
        "input_tokens": 20523,
        "output_tokens": 733,
        "total_tokens": 21256,
    }
    # Its JSON is the plain usage shape, so it normalizes back (losing only the split).
    back = normalize_usage(usage.to_dict())
    assert back.total == tb.total and back.cache_read == 0
    assert normalize_usage(usage) == back


def test_tokens_usage_reasoning_goes_to_output():
    usage = tokens_usage(normalize_usage(OPENAI_CHAT))
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (
        2006,
        300,
        2306,
    )


def test_tokens_usage_rejects_negative_counts():
    with pytest.raises(ValueError, match="input_tokens"):
        TokensUsage(input_tokens=-1)


@pytest.mark.parametrize("value", [True, 1.0, "3", 2**53 + 1])
def test_tokens_usage_rejects_what_is_not_a_count(value):
    with pytest.raises(
        ValueError, match=r"^output_tokens: expected an integer >= 0 \(at most 2\^53\)"
    ):
        TokensUsage(output_tokens=value)


def test_tokens_usage_total_is_derived_or_must_agree():
    assert TokensUsage(input_tokens=3, output_tokens=4).total_tokens == 7
    assert (
        TokensUsage(input_tokens=3, output_tokens=4, total_tokens=7).total_tokens == 7
    )
    # A total that is not input + output would be silently lost when normalized: refused instead.
    with pytest.raises(
        ValueError, match=r"^total_tokens: 9 != input_tokens \+ output_tokens \(7\)$"
    ):
        TokensUsage(input_tokens=3, output_tokens=4, total_tokens=9)


def test_plain_usage_is_read_as_tokens_usage():
    usage = TokensUsage(input_tokens=120, output_tokens=80)
    assert (
        usage.to_breakdown()
        == normalize_usage(PLAIN)
        == normalize_usage(usage)
        == normalize_usage(usage.to_dict())
    )
    assert normalize_usage(usage.to_dict(), provider="plain").total == 200


# -- messages ---------------------------------------------------------------------

OPENAI_CONVERSATION = [
    {"role": "system", "content": "You fix bugs."},
    {"role": "user", "content": [{"type": "text", "text": "Fix src/utils.ts"}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {
                    "name": "read_file",
                    "arguments": '{"path":"src/utils.ts"}',
                },
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_abc",
        "content": "export const sub = (a, b) => a + b",
    },
    {"role": "assistant", "content": "Fixed.", "refusal": None, "id": "msg_9"},
]


def test_openai_messages_pass_through():
    messages = normalize_messages(OPENAI_CONVERSATION)
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    call = messages[2].tool_calls[0]
    assert call == ToolCall(
        id="call_abc",
        function=ToolCallFunction(
            name="read_file", arguments='{"path":"src/utils.ts"}'
        ),
    )
    assert messages[2].content is None
    assert messages[1].content == ({"type": "text", "text": "Fix src/utils.ts"},)
    assert messages[3].tool_call_id == "call_abc"
    # Vendor extras are kept in metadata, known fields are not duplicated there.
    assert messages[4].metadata == {"refusal": None} and messages[4].id == "msg_9"
    dumped = [m.to_dict() for m in messages[:4]]
    assert dumped == OPENAI_CONVERSATION[:4]


def test_openai_developer_role_and_object_arguments():
    messages = normalize_messages(
        [
            {"role": "developer", "content": "Be terse."},
            {
                "role": "assistant",
                "content": "",
                # Some OpenAI-compatible servers (e.g. Ollama) send parsed arguments.
                "tool_calls": [
                    {
                        "id": "c1",
                        "function": {"name": "grep", "arguments": {"pattern": "TODO"}},
                    }
                ],
            },
        ]
    )
    assert messages[0].role == "system" and messages[0].metadata == {
        "original_role": "developer"
    }
    arguments = messages[1].tool_calls[0].function.arguments
    assert isinstance(arguments, str) and json.loads(arguments) == {"pattern": "TODO"}


ANTHROPIC_REQUEST = {
    "system": "You fix bugs.",
    "messages": [
        {"role": "user", "content": "Fix the failing test."},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "I should read the test first.",
                    "signature": "EqQBCgIYAhIM...",
                },
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3..."},
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "read_file",
                    "input": {"path": "test/utils.test.ts"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "bash",
                    "input": {"command": "npm test", "timeout": 60},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": [{"type": "text", "text": "expect(sub(3,1)).toBe(2)"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": "exit code 1: 2 tests failed",
                    "is_error": True,
                },
                {"type": "text", "text": "Keep going."},
            ],
        },
    ],
}


def test_anthropic_blocks_become_openai_messages():
    messages = normalize_messages(ANTHROPIC_REQUEST)
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
    ]
    assistant = messages[2]
    assert assistant.content == "Let me look."
    assert assistant.metadata == {
        "thinking": ["I should read the test first."],
        "redacted_thinking": 1,
    }
    assert [c.id for c in assistant.tool_calls] == ["toolu_01A", "toolu_01B"]
    assert [c.function.name for c in assistant.tool_calls] == ["read_file", "bash"]
    args = assistant.tool_calls[1].function.arguments
    assert isinstance(args, str) and json.loads(args) == {
        "command": "npm test",
        "timeout": 60,
    }
    ok, failed = messages[3], messages[4]
    assert (ok.tool_call_id, ok.content, ok.metadata) == (
        "toolu_01A",
        "expect(sub(3,1)).toBe(2)",
        {"is_error": False},
    )
    assert (failed.tool_call_id, failed.content, failed.metadata) == (
        "toolu_01B",
        "exit code 1: 2 tests failed",
        {"is_error": True},
    )
    assert messages[5].content == "Keep going."


def test_anthropic_tool_results_alone_make_no_empty_user_message():
    messages = normalize_messages(
        [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
                ],
            }
        ]
    )
    assert [m.role for m in messages] == ["tool"]


def test_anthropic_response_and_images_and_block_system():
    response = {
        "id": "msg_01XF",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [
            {"type": "text", "text": "Part one."},
            {"type": "text", "text": "Part two."},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }
    [message] = normalize_messages(response)
    assert message.id == "msg_01XF" and message.metadata["stop_reason"] == "end_turn"
    assert message.content == (
        {"type": "text", "text": "Part one."},
        {"type": "text", "text": "Part two."},
    )

    request = {
        "system": [{"type": "text", "text": "Be careful."}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                    {"type": "text", "text": "What is this?"},
                ],
            }
        ],
    }
    system, user = normalize_messages(request)
    assert system.content == "Be careful."
    assert user.content[0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }


LANGCHAIN_DUMP = [
    {
        "type": "system",
        "content": "You fix bugs.",
        "additional_kwargs": {},
        "response_metadata": {},
        "id": None,
    },
    {"type": "human", "content": "Fix it", "id": "h1"},
    {
        "type": "ai",
        "id": "run-1",
        # langchain-anthropic keeps tool_use blocks in content AND in tool_calls
        "content": [
            {"type": "thinking", "thinking": "read first"},
            {"type": "text", "text": "Reading."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read_file",
                "input": {"path": "a.ts"},
            },
        ],
        "tool_calls": [
            {
                "name": "read_file",
                "args": {"path": "a.ts"},
                "id": "toolu_1",
                "type": "tool_call",
            }
        ],
        "invalid_tool_calls": [
            {"name": "bash", "args": "{not json", "id": "toolu_2", "error": "bad json"}
        ],
        "additional_kwargs": {},
        "response_metadata": {
            "model_name": "claude-sonnet-4",
            "stop_reason": "tool_use",
        },
        "usage_metadata": LANGCHAIN_ANTHROPIC,
    },
    {
        "type": "tool",
        "content": "ENOENT",
        "tool_call_id": "toolu_1",
        "name": "read_file",
        "status": "error",
    },
]


def test_langchain_messages():
    messages = normalize_messages(LANGCHAIN_DUMP)
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool"]
    ai = messages[2]
    assert (
        ai.content == "Reading."
    )  # the duplicated tool_use block is not kept in content
    assert len(ai.tool_calls) == 1
    assert ai.tool_calls[0].function.arguments == json.dumps({"path": "a.ts"})
    assert ai.metadata["thinking"] == ["read first"]
    assert ai.metadata["response_metadata"] == {
        "model_name": "claude-sonnet-4",
        "stop_reason": "tool_use",
    }
    assert ai.metadata["usage_metadata"] == LANGCHAIN_ANTHROPIC
    assert ai.metadata["invalid_tool_calls"][0]["id"] == "toolu_2"
    assert "additional_kwargs" not in ai.metadata  # empty dicts are not carried
    tool = messages[3]
    assert (tool.tool_call_id, tool.name, tool.metadata) == (
        "toolu_1",
        "read_file",
        {"is_error": True},
    )
    # And the usage of that AIMessage normalizes like the native Anthropic payload.
    assert normalize_usage(LANGCHAIN_DUMP[2]) == normalize_usage(ANTHROPIC)


def test_langchain_messages_to_dict_form_role_form_and_missing_ids():
    messages = normalize_messages(
        [
            {"type": "human", "data": {"content": "hi", "type": "human", "id": None}},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"name": "grep", "args": {"q": "x"}, "id": None}],
            },
            {
                "type": "ai",
                "data": {
                    "content": "",
                    "additional_kwargs": {
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "ls", "arguments": "{}"},
                            }
                        ]
                    },
                },
            },
        ]
    )
    assert messages[0] == Message(role="user", content="hi")
    assert (
        messages[1].tool_calls[0].id == "call_1_0"
    )  # generated: LangChain allows a missing id
    assert messages[1].tool_calls[0].function.arguments == '{"q": "x"}'
    assert messages[2].tool_calls[0].function.name == "ls"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("hello", r"messages: expected a list of messages, got str"),
        (
            {"foo": []},
            r"messages: expected a list of messages \(or an object with "
            r"'messages'\), got keys \{'foo'\}",
        ),
        ([42], r"messages\[0\]: expected a message object, got int"),
        ([{"foo": 1}], r"messages\[0\]: unrecognised message keys \{'foo'\}"),
        (
            [{"role": "robot", "content": "x"}],
            r"messages\[0\]\.role: expected one of user, assistant, system, tool",
        ),
        (
            [{"role": "tool", "content": "x"}],
            r"messages\[0\]\.tool_call_id: expected a non-empty string",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}],
                }
            ],
            r"messages\[0\]\.tool_calls\[0\]\.function\.name: expected a non-empty string",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "n", "input": {}},
                        {"type": "widget"},
                    ],
                }
            ],
            r"messages\[0\]\.content\[1\]\.type: unrecognised content block 'widget'",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}
                    ],
                }
            ],
            r"messages\[0\]\.content\[0\]\.is_error: expected true or false",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "n", "input": {}}
                    ],
                }
            ],
            r"messages\[0\]: tool_use blocks are only valid in assistant messages",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t", "name": "n", "input": {1, 2}}
                    ],
                }
            ],
            r"messages\[0\]\.content\[0\]\.input: tool-call arguments are not JSON-serialisable",
        ),
        (
            [{"type": "ai", "content": 7}],
            r"messages\[0\]\.content: expected a string, a list of content parts or null",
        ),
    ],
)
def test_bad_messages_name_what_was_not_understood(raw, message):
    with pytest.raises(ProfilerError, match=message):
        normalize_messages(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            [{"role": "assistant", "content": "x", "metadata": 3}],
            r"^messages\[0\]\.metadata: expected an object, got int$",
        ),
        (
            [{"role": "assistant", "content": "x", "metadata": "note"}],
            r"^messages\[0\]\.metadata: expected an object, got str$",
        ),
        (
            [{"type": "ai", "content": "x", "tool_calls": 5}],
            r"^messages\[0\]\.tool_calls: expected a list, got int$",
        ),
        (
            [{"type": "ai", "content": "x", "invalid_tool_calls": 3}],
            r"^messages\[0\]\.invalid_tool_calls: expected a list, got int$",
        ),
        (
            [{"type": "ai", "content": "x", "additional_kwargs": 3}],
            r"^messages\[0\]\.additional_kwargs: expected an object, got int$",
        ),
        (
            [{"type": "ai", "content": "x", "additional_kwargs": {"tool_calls": 3}}],
            r"^messages\[0\]\.additional_kwargs\.tool_calls: expected a list, got int$",
        ),
        (
            [
                {
                    "type": "ai",
                    "content": "x",
                    "additional_kwargs": {
                        "tool_calls": [{"function": {"arguments": "{}"}}]
                    },
                }
            ],
            r"^messages\[0\]\.additional_kwargs\.tool_calls\[0\]\.name: "
            r"expected a non-empty string",
        ),
    ],
)
def test_wrong_kinds_of_containers_are_one_line_errors(raw, message):
    # Not a TypeError from deep inside: a ProfilerError naming the field.
    with pytest.raises(ProfilerError, match=message):
        normalize_messages(raw)


def test_message_provider_is_checked():
    with pytest.raises(ProfilerError, match=r"unknown message provider 'gemini'"):
        normalize_messages([], provider="gemini")
    # Forcing "openai" on a plain message works like detection does.
    assert normalize_messages(
        [{"role": "user", "content": "x"}], provider="openai"
    ) == [Message(role="user", content="x")]


def test_tool_call_arguments_must_be_a_string():
    with pytest.raises(ValueError, match="arguments: expected a JSON string"):
        ToolCallFunction(name="f", arguments={"a": 1})
