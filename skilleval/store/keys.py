"""Content-addressed trial keys.

A key hashes everything that can change a trial's answer: the backend identity (name,
resolved model, sampling parameters, harness version), the full listing of skills shown
(names and descriptions, in order), the skill bodies installed (real backends show them
after a trigger), the target, the query and the repeat index. The same trial asked again,
by a rerun, a resumed run or another sweep cell, has the same key and is read from the store.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Sequence

from skilleval.domain import ListedSkill


def identity_digest(identity: dict[str, Any]) -> bytes:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).digest()


def listing_digest(listing: Sequence[ListedSkill], bodies: Sequence[tuple[str, str]] = (),
                   extras: Sequence[tuple[str, str]] = ()) -> bytes:
    """`extras`: (name, `Skill.install_extras`) of installed skills that have any (other
    frontmatter keys, resource files); skills with none leave the digest as it was."""
    h = hashlib.sha256()
    for s in listing:
        h.update(s.name.encode() + b"\x00" + s.description.encode() + b"\x01")
    for name, body in bodies:
        h.update(b"\x02" + name.encode() + b"\x00" + body.encode())
    for name, extra in extras:
        if extra:
            h.update(b"\x03" + name.encode() + b"\x00" + extra.encode())
    return h.digest()


def trial_key(identity: bytes, listing: bytes, target: str, query: str, repeat: int) -> str:
    h = hashlib.sha256(identity)
    h.update(listing)
    h.update(target.encode() + b"\x00" + query.encode() + b"\x00" + str(repeat).encode())
    return h.hexdigest()
