"""The streamed-reply reader: whatever way a reply is chunked, the same readable fields."""

from __future__ import annotations

import json
import re

import pytest

from tui.render.streamfields import TRUNCATED_NOTE, FieldStream

POSITION = {"stance": 'Adopt it, "carefully".', "rationale": "Line one\nline two", "vote": "adopt"}
READ = 'stance: Adopt it, "carefully".\n\nrationale: Line one\nline two\n\nvote: adopt'


def read(chunks: list[str]) -> str:
    stream = FieldStream()
    return "".join(stream.feed(chunk) for chunk in chunks)


def test_fields_are_labelled_paragraphs_never_json() -> None:
    shown = read([json.dumps(POSITION)])
    assert shown == READ
    assert "{" not in shown and '":' not in shown


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_any_chunking_reads_the_same(size: int) -> None:
    text = json.dumps({**POSITION, "stance": "caf\u00e9 \u2014 ok"}, ensure_ascii=True)
    assert "\\u" in text  # the escapes themselves are split across chunks
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert read(chunks) == read([text]) == READ.replace('Adopt it, "carefully".', "café — ok")


def test_word_tokens_like_the_scripted_provider() -> None:
    text = json.dumps(POSITION)
    assert read(re.findall(r"\S+\s*|\s+", text)) == READ


def test_lists_become_bullets_and_numbers_show() -> None:
    reply = {"weaknesses": ["No rollback.", "No owner."], "score": 40, "verdict": "defects_found"}
    assert read([json.dumps(reply)]) == (
        "weaknesses: \n- No rollback.\n- No owner.\n\nscore: 40\n\nverdict: defects_found"
    )


def test_objects_in_a_list_are_one_bullet_each() -> None:
    reply = {
        "challenges": [
            {"category": "risk", "concern": "No plan.", "severity": "critical"},
            {"category": "cost", "concern": "Too dear.", "severity": "minor"},
        ],
        "verdict": "objections",
    }
    assert read([json.dumps(reply)]) == (
        "challenges: \n- category: risk · concern: No plan. · severity: critical"
        "\n- category: cost · concern: Too dear. · severity: minor\n\nverdict: objections"
    )


def test_deeper_nesting_is_left_out() -> None:
    reply = {"stance": "s", "extra": {"inner": {"deep": "hidden"}}}
    shown = read([json.dumps(reply)])
    assert "hidden" not in shown and shown.startswith("stance: s")


def test_a_fence_and_prose_before_the_object() -> None:
    assert read(["```json\n", '{"vote": "adopt"}', "\n```"]) == "vote: adopt"
    assert read(['Sure. {"vote": ', '"adopt"}']) == "Sure. \n\nvote: adopt"


def test_plain_text_passes_through_cleaned() -> None:
    shown = read(["I would rather not\x1b[31m answer."])
    assert shown.startswith("I would rather not") and shown.endswith("[31m answer.")
    assert "\x1b" not in shown


def test_control_characters_in_values_never_reach_the_screen() -> None:
    shown = read([json.dumps({"stance": "a\x1b]52;c;AAAA\x07b\u202ec"})])
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown


def test_output_is_bounded_with_a_note() -> None:
    stream = FieldStream(limit=20)
    shown = stream.feed(json.dumps({"stance": "x" * 100}))
    assert shown.startswith("stance: xxxxxxxxxxxx")
    assert shown.endswith(TRUNCATED_NOTE)
    assert stream.feed("more") == ""
