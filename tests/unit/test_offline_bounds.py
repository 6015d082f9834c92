"""The offline judge's work per message is bounded: linear passes, shared per-case parsing,
and caps whose skipped work leaves a claim undecided (never passed). No timings here: the
figures are bench/adversarial.py's; these tests count work and check verdicts."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.case import Passage, PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge, align, details, entities, judge, numbers, times
from guard.offline import claims as claims_module
from guard.offline.align import EvidenceIndex
from guard.offline.claims import MIN_CLAUSE_CONTENT_WORDS, Claim, _clauses, clause_spans
from guard.offline.text import content_stems


def reference_clauses(sentence: str) -> list[str]:
    """The clause split as first written (quadratic: each merge re-reads the merged span)."""
    merged: list[tuple[int, int]] = []
    for begin, end in clause_spans(sentence):
        piece = sentence[begin:end].strip()
        if not piece:
            continue
        previous = sentence[merged[-1][0] : merged[-1][1]] if merged else ""
        if merged and (
            min(len(content_stems(piece)), len(content_stems(previous))) < MIN_CLAUSE_CONTENT_WORDS
            or claims_module._predicate_of(previous, piece)
        ):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((begin, end))
    return [sentence[b:e].strip() for b, e in merged] or [sentence]


_PIECES = st.sampled_from(
    [
        "a",
        "the",
        "returns",
        "refund",
        "30 days",
        "Paris",
        "well-known",
        "provided that",
        "unless",
        "however",
        "and",
        "but",
        "it",
        "they",
        ",",
        ";",
        ", and",
        ", but",
        " ",
        "  ",
        "delivery",
        "1,000",
        "is",
        "was",
        "Dr Hughes",
        "no",
    ]
)


class TestClauses:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(_PIECES, max_size=40))
    def test_the_linear_split_equals_the_reference(self, pieces: list[str]) -> None:
        sentence = " ".join(pieces).replace(" ,", ",").replace(" ;", ";")
        assert _clauses(sentence) == reference_clauses(sentence)

    @pytest.mark.parametrize("unit", ["a, but b and the c; ", "1, 2, ", "x; "])
    def test_stems_are_read_in_one_pass(self, unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
        read = [0]

        def counting(text: str) -> list[str]:
            read[0] += len(text)
            return content_stems(text)

        monkeypatch.setattr(claims_module, "content_stems", counting)
        sentence = unit * (4_000 // len(unit))
        _clauses(sentence)
        assert read[0] <= 2 * len(sentence)  # was quadratic: ~1,000 x the sentence


def prepared(output: str, context: str | list[str], question: str | None = None) -> PreparedCase:
    settings = JudgeSettings()
    case = Guard(OfflineJudge(settings), settings).prepare(
        JudgeRequest(output=output, context=context, question=question)
    )
    assert isinstance(case, PreparedCase)
    return case


class TestSharedParsing:
    def test_the_windows_of_one_case_index_its_evidence_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        built = [0]
        original = EvidenceIndex.build.__func__  # type: ignore[attr-defined]

        def counting(cls: type[EvidenceIndex], *args: Any) -> EvidenceIndex:
            built[0] += 1
            return original(cls, *args)  # type: ignore[no-any-return]

        monkeypatch.setattr(EvidenceIndex, "build", classmethod(counting))
        first = prepared(
            "Returns are accepted within 30 days.",
            ["Our return policy allows returns within 30 days. " * 50],
        )
        second = replace(first, output="Refunds take 5 days.", window=2)
        judge = OfflineJudge()
        judge.check(first)
        judge.check(second)
        judge.check(first)
        assert built[0] == 1

    def test_a_passage_seen_by_several_windows_is_read_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        read: list[str] = []
        original = align._read_sentences

        def counting(passage: Passage) -> list[Any]:
            read.append(passage.label)
            return original(passage)

        monkeypatch.setattr(align, "_read_sentences", counting)
        shared = Passage("[1]", "Returns are accepted within 31 days, said the shared page.")
        for other in ("Refunds take 5 days.", "Exchanges are free."):
            passages = (shared, Passage("[2]", other))
            EvidenceIndex.build(passages, "\n".join(p.text for p in passages))
        assert read == ["[1]", "[2]", "[2]"]


_NAME_WORDS = st.sampled_from(
    ["Dr", "Hughes", "Nair", "Reviewer", "1", "2", "O'Brien", "AT&T", "Jean-Luc", "Ünal", "x_y"]
)
_TEXT_BITS = st.sampled_from(
    [
        "Dr",
        "dr.",
        "Hughes",
        "hughes's",
        "Nair",
        "reviewer",
        "1",
        "2",
        "12",
        "o'brien",
        "O'Briens",
        "at&t",
        "Jean-Luc",
        "ünal",
        "x_y",
        " ",
        ", ",
        "\n",
        "-",
        "(",
        ")",
    ]
)


def reference_named_in(name: str, text: str) -> bool:
    """The name match as first written: a regex over both texts in lower case."""
    words = [re.escape(w) for w in name.lower().split()]
    if re.search(r"\b" + r"\W+".join(words) + r"\b", text.lower()) is not None:
        return True
    # and a title with a surname, given names or initials between ("Dr Osei" / "Dr A. Osei")
    plain = all(re.fullmatch(r"\w+", w) for w in name.lower().split())
    if not plain or len(words) != 2 or words[0] not in entities._TITLES:
        return False
    between = r"\W+(?:[a-z]+\.?\s+){1,2}"
    return re.search(rf"\b{words[0]}{between}{words[1]}\b", text.lower()) is not None


class TestNames:
    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(_NAME_WORDS, min_size=1, max_size=3),
        st.lists(st.lists(_TEXT_BITS, max_size=12).map(" ".join), min_size=1, max_size=4),
    )
    def test_a_name_is_found_as_the_regex_found_it(
        self, words: list[str], texts: list[str]
    ) -> None:
        name = entities.Name(" ".join(words), tuple(w.lower() for w in words))
        assert [name.named_in(t) for t in texts] == [
            reference_named_in(name.text, t) for t in texts
        ]
        index = EvidenceIndex.build([Passage(f"[{i}]", t) for i, t in enumerate(texts)], "")
        assert index.naming(name) == {
            label for label, text in index.texts.items() if reference_named_in(name.text, text)
        }


_DATE_VALUES = st.builds(
    lambda y, m, d: float(y * 10000 + m * 100 + d),
    st.sampled_from([0, 1999, 2020, 2021]),
    st.integers(0, 3),
    st.sampled_from([0, 1, 5, 20]),
)
_QUANTITIES = st.one_of(
    st.builds(numbers.Quantity, st.just("d"), _DATE_VALUES, st.just("date")),
    st.builds(
        numbers.Quantity,
        st.just("n"),
        st.sampled_from([0.0, 1.0, 5.0, 20.0, 1999.0, 2020.0, 2021.0]),
        st.sampled_from(["year", "count", "ordinal", "percent", "USD"]),
        st.booleans(),
        st.sampled_from([0.0, 1.0, 5.0, 20.0]),
    ),
)


class TestQuantityIndex:
    @settings(max_examples=300, deadline=None)
    @given(_QUANTITIES, st.lists(_QUANTITIES, max_size=8))
    def test_a_date_lookup_equals_the_scan(
        self, claim: numbers.Quantity, evidence: list[numbers.Quantity]
    ) -> None:
        index = numbers.QuantityIndex(evidence)
        scanned = any(numbers.matches(claim, e) for e in evidence if e.kind == "date")
        if claim.kind == "date":
            assert index.supports(claim) == scanned
        elif scanned:
            assert index.supports(claim)
        else:
            assert index.supports(claim) == any(
                numbers.matches(claim, e)
                for e in index.near(claim.value, 0.11) + index.near(claim.number, 0.11)
            )


class TestCappedEvidence:
    """Evidence past MAX_SENTENCES is not read; what the read part shows decides nothing."""

    def test_within_the_cap_the_claims_are_decided(self) -> None:
        case = prepared(
            "Returns are accepted within 45 days.", ["Returns are accepted within 30 days."]
        )
        decision = OfflineJudge().decide(case)
        assert decision.label == "fail"

    @pytest.mark.parametrize(
        "output",
        [
            "Returns are accepted within 45 days.",
            "Returns are accepted within 30 days.",
            "Returns are accepted within 30 days. Pets fly free on every Tuesday morning.",
        ],
    )
    def test_past_the_cap_no_claim_passes_or_fails(
        self, output: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(align, "MAX_SENTENCES", 3)
        judge._index.cache_clear()
        evidence = "Returns are accepted within 30 days. " + "Refunds take 5 days. " * 5
        decision = OfflineJudge().decide(prepared(output, [evidence]))
        judge._index.cache_clear()
        assert decision.label == "undecided"
        assert {r.basis for r in decision.results} == {"evidence_capped"}
        assert all("only the first were read" in r.reason for r in decision.results)

    @settings(max_examples=300, deadline=None)
    @given(_QUANTITIES, st.lists(_QUANTITIES, max_size=6), st.integers(1, 40))
    def test_repeated_amounts_are_one_candidate_with_the_same_answer(
        self, claim: numbers.Quantity, evidence: list[numbers.Quantity], times: int
    ) -> None:
        def near(value: float, around: float) -> bool:
            slack = abs(around) * 0.11 + 1e-9
            return around - slack <= value <= around + slack

        # the lookup as first written: every evidence amount in the window, one by one
        window = [
            e
            for e in evidence * times
            if e.kind != "date"
            and any(
                near(v, c)
                for v in (e.value, e.number or e.value)
                for c in (claim.value, claim.number)
            )
        ]
        dated = any(numbers.matches(claim, e) for e in evidence if e.kind == "date")
        expected = dated or (
            claim.kind != "date" and any(numbers.matches(claim, e) for e in window)
        )
        assert numbers.QuantityIndex(evidence * times).supports(claim) == expected


_DETAIL_BITS = st.sampled_from(
    [
        "12am",
        "9:00",
        "5pm",
        "1",
        "30 days",
        "$5",
        "on",
        "at",
        "to",
        "-",
        "Monday",
        "May 5, 2020",
        "from",
        "10:30-11:45",
        " ",
    ]
)


class TestDetails:
    @settings(max_examples=200, deadline=None)
    @given(st.lists(_DETAIL_BITS, min_size=1, max_size=20).map(" ".join))
    def test_amounts_inside_times_are_dropped_as_the_scan_dropped_them(self, text: str) -> None:
        spans = [t.span for t in times.times(text)]
        expected = [
            q
            for q in numbers.extract(text)
            if not any(a <= q.start < b for a, b in spans)
            and not details._counted(q)
            and not details.enumerator(text, q)
        ][: details.MAX_AMOUNTS]
        assert details.Details.of(Claim(text), True).quantities == expected


def _plain(words: Any) -> str:
    """An alternation as the patterns first wrote it: no lookahead before the words."""
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


def _unguarded(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` without the first-letter lookaheads of :func:`lexicon.alternation`."""
    return re.compile(re.sub(r"\(\?=\[[^\]]*\]\)", "", pattern.pattern), pattern.flags)


# text dense with what the number, date, time and weekday grammars read: every position a
# word boundary, as in bench/adversarial.py's "'1 ' x 15 KB" and "'12am ' x 15 KB"
_DENSE_BITS = st.sampled_from(
    [
        "1",
        "12",
        "2020",
        "1,5",
        "1.200,50",
        "12am",
        "9:00",
        "$5",
        "5 €",
        "30%",
        "2 hours",
        "3 km",
        "twenty-one",
        "three times",
        "first",
        "May",
        "5 March 2021",
        "Mon-Fri",
        "weekdays",
        "about",
        "c.",
        "~",
        "in total",
        "leaves",
        "until",
        "No.",
        "r e t u r n",
        " ",
        ",",
        "-",
        ".",
    ]
)


class TestDenseNumbers:
    """The guarded alternations and the bare-number shortcut read dense text as the plain
    grammar did (bench/adversarial.py measures what they save)."""

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_DENSE_BITS, min_size=1, max_size=40).map(" ".join))
    def test_guarded_patterns_match_as_the_plain_ones(self, text: str) -> None:
        patterns = [
            numbers._DATE,
            numbers._QUANTITY[False],
            numbers._QUANTITY[True],
            times._WEEKDAY,
            times._HEDGE,
            details._COMPUTES,
            details._DATE_COMPUTES,
        ]
        for pattern in patterns:
            plain = _unguarded(pattern)
            assert plain.pattern != pattern.pattern
            got = [(m.span(), m.groupdict()) for m in pattern.finditer(text)]
            assert got == [(m.span(), m.groupdict()) for m in plain.finditer(text)]

    def test_the_unguarded_quantity_pattern_is_the_first_one(self) -> None:
        from guard.offline.lexicon import SCALES, UNITS, WORD_NUMBERS

        plain = _unguarded(numbers._QUANTITY[False]).pattern
        for words in (UNITS, SCALES, WORD_NUMBERS):
            assert _plain(words) in plain

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_DENSE_BITS, min_size=1, max_size=40).map(" ".join), st.booleans())
    def test_a_bare_number_reads_as_the_unit_grammar_reads_it(self, text: str, eu: bool) -> None:
        for match in numbers._QUANTITY[eu].finditer(text):
            num = match.group("num")
            if match.end() == match.end("num") and num.isdigit() and not match.group("sign"):
                assert numbers._bare(text, match, num) == numbers._measured(text, match, eu)

    def test_bare_numbers_are_read_whole(self) -> None:
        text = "1 " * 2_000
        assert len(numbers.extract(text)) == 2_000
        claim = details.Details.of(Claim(text), True)
        assert claim.overflow
        assert len(claim.quantities) == details.MAX_AMOUNTS
