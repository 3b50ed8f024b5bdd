"""Rules indexed by their prefilter, so a view of a message only tries the rules it could
match (the injection guard's two indexes: every rule family, and the compact rules)."""

from __future__ import annotations

from pathlib import Path

from graphs.guards.prescreen import Prescreen
from graphs.guards.rule import Rule
from graphs.guards.rule_gate import gate_passes, word_gate

__all__ = ["RuleIndex"]


class RuleIndex:
    """Rules indexed by their prefilter, so a view only tries the rules it could match;
    with `prescreen`, only those Hyperscan finds a loose form of in the view (see
    `prescreen`), else every rule whose prefilter words or needles the view holds."""

    def __init__(
        self, rules: tuple[Rule, ...], *, prescreen: bool = True, name: str = "rules"
    ) -> None:
        self._rules = rules
        self._gates = tuple(word_gate(rule.pattern) for rule in rules)
        self._by_word: dict[str, list[int]] = {}
        self._ascii_needles: list[tuple[str, int]] = []
        self._other_needles: list[tuple[str, int]] = []
        self._always: list[int] = []
        for index, rule in enumerate(rules):
            for word in rule.words:
                self._by_word.setdefault(word, []).append(index)
            for needle in rule.needles:
                kind = self._ascii_needles if needle.isascii() else self._other_needles
                kind.append((needle, index))
            if not rule.words and not rule.needles:
                self._always.append(index)
        patterns = [rule.pattern for rule in rules]
        self._prescreen = Prescreen(patterns, name=name) if prescreen else None

    def candidates(self, view: str, tokens: frozenset[str]) -> list[Rule]:
        """The rules whose prefilter and word gate `view` (made of `tokens`) passes and
        that the prescreen says could match, in table order. `view` may be an excerpt of
        the text the rules will read: its stretches where a match can lie, joined."""
        return [rule for rule, _ends in self.candidates_and_ends(view, tokens)]

    def candidates_and_ends(
        self, view: str, tokens: frozenset[str]
    ) -> list[tuple[Rule, list[int] | None]]:
        """`candidates`, each with where in `view` its loose matches end, as the prescreen
        saw them (every match of the rule ends at one of these); None when unknown."""
        ends = None if self._prescreen is None else self._prescreen.match_ends(view)
        if ends is not None:
            return [
                (self._rules[index], ends[index])
                for index in sorted(ends)
                if self._prefilter_passes(index, view, tokens)
                and gate_passes(self._gates[index], tokens)
            ]
        found = set(self._always)
        for token in tokens & self._by_word.keys():
            found.update(self._by_word[token])
        for needle, index in self._ascii_needles:
            if index not in found and needle in view:
                found.add(index)
        if not view.isascii():
            # A needle can only occur where its first character does: one set of the
            # view's characters spares most of the other scripts' needles a search.
            chars = set(view)
            for needle, index in self._other_needles:
                if index not in found and needle[0] in chars and needle in view:
                    found.add(index)
        return [
            (self._rules[index], None)
            for index in sorted(found)
            if gate_passes(self._gates[index], tokens)
        ]

    def prepare(self, cache_dir: Path | None) -> None:
        """Build the prescreen now rather than at the first view (about 5 s), or read it
        from `cache_dir`."""
        if self._prescreen is not None:
            self._prescreen.build(cache_dir)

    def _prefilter_passes(self, index: int, view: str, tokens: frozenset[str]) -> bool:
        """The plain path's prefilter for one rule: kept after the prescreen so that both
        paths try exactly the same rules (a rule's prefilter words are written by hand)."""
        rule = self._rules[index]
        if not rule.words and not rule.needles:
            return True
        return not rule.words.isdisjoint(tokens) or any(n in view for n in rule.needles)
