"""Style sheets written into ``style`` attributes, for HTML that must look the same sanitized.

JupyterLab sanitizes HTML outputs it does not trust (a notebook saved elsewhere, or reopened
after an edit): ``<style>`` elements are removed while ``style`` attributes stay (with the common
layout properties). :func:`inline_styles` copies the rules of a small style sheet onto the
elements they select, so a static rendering keeps its look. Selectors understood: ``.a``,
``tag``, ``tag.a``, ``.a.b``, and one descendant step (``.a td``, ``.a li.b``); comma lists;
rules apply in sheet order, later declarations winning, and an element's own ``style`` last.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

_VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr"}
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class _Simple:
    tag: str | None
    classes: frozenset[str]

    def matches(self, tag: str, classes: set[str]) -> bool:
        return (self.tag is None or self.tag == tag) and self.classes <= classes


def _simple(text: str) -> _Simple:
    tag, *classes = text.split(".")
    return _Simple(tag or None, frozenset(classes))


def _rules(css: str) -> list[tuple[_Simple | None, _Simple, str]]:
    rules = []
    for selectors, body in _RULE.findall(css):
        for selector in selectors.split(","):
            steps = selector.split()
            if not steps or len(steps) > 2:
                raise ValueError(f"inline_styles: selector {selector.strip()!r} is not supported")
            ancestor = _simple(steps[0]) if len(steps) == 2 else None
            rules.append((ancestor, _simple(steps[-1]), body.strip().rstrip(";")))
    return rules


class _Inliner(HTMLParser):
    def __init__(self, css: str) -> None:
        super().__init__(convert_charrefs=False)
        self.rules = _rules(css)
        self.out: list[str] = []
        self.open: list[tuple[str, set[str]]] = []

    def _styled(self, tag: str, attrs: list[tuple[str, str | None]]) -> str:
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        declarations = [
            body
            for ancestor, target, body in self.rules
            if target.matches(tag, classes) and (ancestor is None or any(ancestor.matches(t, c) for t, c in self.open))
        ]
        if declarations:
            own = values.get("style")
            values["style"] = ";".join(declarations + ([own] if own else []))
        text = "".join(
            f" {name}" if value is None else f" {name}='{html.escape(value, quote=True)}'"
            for name, value in values.items()
        )
        return f"<{tag}{text}>"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self._styled(tag, attrs))
        if tag not in _VOID:
            self.open.append((tag, set((dict(attrs).get("class") or "").split())))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self._styled(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index][0] == tag:
                del self.open[index:]
                break
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.out.append(data)

    def handle_entityref(self, name: str) -> None:
        self.out.append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.out.append(f"&#{name};")


def inline_styles(markup: str, css: str) -> str:
    """``markup`` with the rules of ``css`` copied into the ``style`` attributes of the elements
    they select (see the module docstring for the selectors understood)."""
    inliner = _Inliner(css)
    inliner.feed(markup)
    inliner.close()
    return "".join(inliner.out)


__all__ = ["inline_styles"]
