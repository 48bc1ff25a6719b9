"""Replace one top-level value of a YAML frontmatter in place, leaving every other byte alone.

Why not load and dump: re-rendering the frontmatter through PyYAML (YAML 1.1) changed what
the user wrote beyond the key being replaced. Comments went, ``version: 1.10`` came back as
``1.1``, ``zip: 012345`` as the octal ``5349`` and ``flag: no`` as ``false``: a skill that
`optimize.apply` had only meant to give a new description. PyYAML's composed nodes carry
where each key and value start and end in the text, so only that span is rewritten.
"""
from __future__ import annotations

from typing import Any

import yaml


class NotEditable(ValueError):
    """The frontmatter's layout does not allow an in-place edit of that key."""


def replace_value(frontmatter: str, key: str, value: Any) -> str:
    """`frontmatter` (the text between the ``---`` lines) with `key`'s value set to `value`.

    The key must appear once in a top-level block mapping; its span (from the key to the end
    of its value) is replaced by a freshly rendered ``key: value``. NotEditable otherwise (a
    flow mapping on one line, the key missing or repeated)."""
    try:
        root = yaml.compose(frontmatter, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise NotEditable(f"the frontmatter is not valid YAML ({exc})") from None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise NotEditable("the frontmatter is not a block mapping (one key per line)")
    spans = [(k.start_mark.index, v.end_mark.index) for k, v in root.value
             if isinstance(k, yaml.ScalarNode) and k.value == key]
    if len(spans) != 1:
        raise NotEditable(f"the frontmatter has {len(spans)} {key!r} keys, not one")
    start, end = spans[0]
    rendered = yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=10_000).rstrip("\n")
    old = frontmatter[start:end]
    # a block scalar's span ends after its line break(s); keep the layout after it as it was
    tail = old[len(old.rstrip("\r\n")):]
    return frontmatter[:start] + rendered + tail + frontmatter[end:]
