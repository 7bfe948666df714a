"""No secret moot knows is written, printed or exported; literal keys in a spec are refused."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tui.engine import SpecError, validate_spec
from tui.engine.redact import Redactor, key_env_names

GOOD: dict[str, Any] = {
    "debate": {"title": "T", "motion": "M", "max_rounds": 1, "consensus_threshold": 2},
    "debaters": [{"id": "a", "model": "scripted"}, {"id": "b", "model": "scripted"}],
}
SHAPED = "sk-proj-Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3"


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    return info.value.problems


def spec_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(GOOD)
    node: Any = raw
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("debaters", 0, "role"), f"You argue for it. Key: {SHAPED}", "debaters[0].role"),
        (("debaters", 0, "persona"), f"Bearer {SHAPED}", "debaters[0].persona"),
        (("debate", "motion"), f"Should we rotate {SHAPED}?", "debate.motion"),
        (("debate", "artifact"), f"OPENAI_API_KEY={SHAPED}\n", "debate.artifact"),
        (("debaters", 0, "script"), {"stances": [f"I leak {SHAPED}"]}, "debaters[0].script"),
        (("debaters", 0, "api_key_env"), SHAPED, "debaters[0].api_key_env"),
        (("debaters", 0, "api_key_env"), "Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3Pq", "debaters[0].api_key_env"),
        (("debaters", 0, "api_key_env"), "3f9a" * 10, "debaters[0].api_key_env"),
    ],
)
def test_a_literal_key_in_any_text_field_is_refused_by_key_path(
    path: tuple[Any, ...], value: Any, where: str
) -> None:
    found = problems(spec_with(path, value))
    assert any(p.startswith(where) for p in found), found
    assert not any(SHAPED in p for p in found)  # the message never repeats the key


@pytest.mark.parametrize(
    ("base", "part"),
    [
        ("http://bob:hunter2pw@127.0.0.1:1/v1", "user info"),
        ("http://Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3@host/v1", "user info"),
        ("http://h/v1?api_key=abc123", "query parameter 'api_key'"),
        ("http://h/v1?api-version=2024-01-01&auth_token=x", "query parameter 'auth_token'"),
        ("http://h/v1?x=Zx8Qm2Lk9Vb4Nc7Rt1Yh6Wd3", "query parameter 'x'"),
        ("http://h/v1#key=abc123", "#fragment"),
        ("http://h/v1#Zx8Qm2Lk9Vb4", "#fragment"),
    ],
)
def test_credentials_in_any_part_of_api_base_are_refused(base: str, part: str) -> None:
    found = problems(spec_with(("debaters", 0, "api_base"), base))
    assert any(
        p.startswith("debaters[0].api_base: holds a credential") and part in p for p in found
    )


def test_ordinary_specs_are_not_mistaken_for_keys() -> None:
    raw = spec_with(("debaters", 0, "role"), "Favour a risk-management-and-mitigation-first plan.")
    raw["debaters"][0]["api_key_env"] = "OPENAI_API_KEY"
    raw["debaters"][1]["api_base"] = "https://example.openai.azure.com/v1?api-version=2024-06-01"
    validate_spec(raw)


def test_more_than_64_debaters_is_refused_with_the_limit() -> None:
    raw = copy.deepcopy(GOOD)
    raw["debaters"] = [{"id": f"d{i}", "model": "scripted"} for i in range(65)]
    assert "debaters: 65 debaters; at most 64 take part in one debate" in problems(raw)
    raw["debaters"] = raw["debaters"][:64]
    validate_spec(raw)


def test_redactor_replaces_known_values_shapes_and_url_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOOT_CRED_FOR_A", "plain-looking-value-42")  # no KEY/TOKEN in its name
    raw = spec_with(("debaters", 0, "api_key_env"), "MOOT_CRED_FOR_A")
    assert key_env_names(raw) == ["MOOT_CRED_FOR_A"]
    redact = Redactor.for_spec(validate_spec(raw))
    text = redact(
        f"value plain-looking-value-42, shape {SHAPED}, url http://u:p@h/x?token=zz#sig=yy"
    )
    for secret in ("plain-looking-value-42", SHAPED, "u:p@", "zz", "yy"):
        assert secret not in text
    assert redact.tree({"a": [SHAPED, 3], SHAPED: None}) == {
        "a": ["[redacted]", 3],
        "[redacted]": None,
    }
    assert redact("risk-management-and-mitigation-first") == "risk-management-and-mitigation-first"
