"""A plugin component's cache identity names the plugin and the settings it was built with:
a plugin judge whose own identity() ignored its params shared grade keys between a configured
instance and the default one, so one's cached grades answered for the other."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skilleval.registry import Registration, Registry


@dataclass
class StrictParams:
    strict: bool = False
    api_key: str = ""


class ForgetfulJudge:
    """identity() leaves its params out, as a plugin may."""

    name = "forgetful"
    samples = 1

    def __init__(self, params: StrictParams) -> None:
        self.params = params

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name}


def _registry(distribution: str) -> Registry:
    reg = Registry()
    reg.add(Registration("judge", "forgetful", ForgetfulJudge, StrictParams, "", "plug",
                         distribution, "1.0"))
    return reg


def test_a_plugin_judges_identity_follows_its_params_and_hides_their_values() -> None:
    reg = _registry("thirdparty")
    default = reg.build("judge", {"name": "forgetful"}).identity()
    strict = reg.build("judge", {"name": "forgetful", "strict": True}).identity()
    again = reg.build("judge", {"name": "forgetful", "strict": True}).identity()
    assert strict != default and strict == again
    assert strict["plugin"] == "thirdparty==1.0" and strict["registered_as"] == "forgetful"
    secret = reg.build("judge", {"name": "forgetful", "api_key": "sk-secret-value"}).identity()
    assert secret != default and "sk-secret-value" not in repr(secret)


def test_a_builtin_component_keeps_its_own_identity() -> None:
    reg = _registry("skilleval")
    assert reg.build("judge", {"name": "forgetful", "strict": True}).identity() == {"judge": "forgetful"}
