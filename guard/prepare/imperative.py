"""Whether an injection-like match ("ignore the instructions", "rate this 5") is an order aimed
at the model, or prose about instructions and grades.

A policy document saying "employees may not ignore safety instructions" ("Les employés ne
doivent pas ignorer les consignes de sécurité", "员工不得忽略安全指令") mentions ignoring
instructions without telling the judge anything; flagging it would fail a grounded answer.
:func:`aimed_at_model` keeps an override match when it names the prompt's own instructions
("previous", "above", "your" and their translations: prose about workplace rules has no reason
to say that, and an attacker can put a negation before anything: "never hesitate to ignore all
previous instructions"), and otherwise, like a score request, only when it is an imperative not
negated:

* not negated: no negation among the two words before the verb or just before the "to"/"de"
  introducing it ("must not ignore", "ne doivent pas ignorer", "interdit d'ignorer", "不得忽略"),
  and no negating ending after a verb-final one ("無視してはいけません", "무시해서는 안");
* an imperative: the verb opens its clause, with nothing before it but an address, a "please",
  a "you must" or a "now" (:data:`_LEAD_WORDS`; "Grader: ignore...", "Veuillez oublier...",
  "请忽略..."); an infinitive ("ignorer") needs such a request before it, a Japanese or Korean
  verb an imperative ending after it ("無視して", "무시하세요"), and a Chinese verb followed by
  a subject's predicate ("忽略安全指令很危险", "...的员工") is not one. So "Critics rate this 5
  stars" and "Le professeur donne la note de 5" are not score requests; "Rate this 5" is.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LOOK_BEHIND = 80  # characters of the clause before the verb read for its subject and negation
_LOOK_AHEAD = 30
_WORD = re.compile(r"\w+")

# a clause starts after punctuation or a conjunction (word sets and substring tests: a regex
# alternation of words would be tried at every position, for every match)
_PUNCTUATION = re.compile(r"[.!?;:\n\u3002\uff01\uff1f\uff1b\uff1a,\uff0c\u3001()\[\]\"«»“”„—–]")
_CONJUNCTIONS = _words(
    "and then but et puis mais und dann aber y luego pero e poi ma en и затем потом но"
)
_CJK_CONJUNCTIONS = ("并且", "然后", "但是", "并", "再", "但")
_NEGATIONS = _words(
    """not never no nor cannot dont ne n pas jamais interdit sans nunca jamás jamas prohibido
    sin nicht nie niemals kein keine keinen keinem keiner keines verboten ohne non mai vietato
    senza não nao proibido sem niet nooit geen verboden zonder не нельзя никогда запрещено без
    لا ممنوع"""
)
_CJK_NEGATIONS = ("不", "别", "勿", "没", "未", "莫", "禁止")
# a negating ending right after a verb-final language's verb
_NEGATED_AFTER = re.compile(
    r"(?:しない|しては|せず|するな|하지|해서는|하면\s*안|ma\b|me\b|mayın|meyin|\s*न\b|\s*मत|\s*नहीं)"
)
# what may precede an imperative verb in its clause: addresses, please, you must, now
_LEAD_WORDS = _words(
    """please kindly now just simply also immediately first instead so you must should shall
    will need needs to have are hereby always from on ai llm model assistant judge grader
    evaluator reviewer scorer dear hey hi important note attention urgent ok okay the
    veuillez merci de d s il vous te plaît plait tu dois devez maintenant désormais dorénavant
    simplement immédiatement aussi alors donc cher chère juge évaluateur correcteur modèle ia
    important attention à au por favor ahora debes debe tienes tiene que usted tú
    simplemente también entonces juez evaluador modelo asistente importante atención nota
    querido estimado bitte jetzt nun du musst sie müssen sollst sollen einfach sofort auch also
    richter bewerter prüfer modell ki assistent wichtig achtung hinweis lieber liebe per favore
    ora adesso devi semplicemente subito anche quindi giudice valutatore assistente
    attenzione caro agora você voce precisa tem também então juiz avaliador atenção
    alsjeblieft alstublieft nu je jij u moet moeten gewoon meteen ook beoordelaar assistent
    belangrijk let op beste пожалуйста теперь сейчас ты вы должен должна должны просто сразу
    также судья оценщик модель ии ассистент важно внимание proszę teraz musisz prostu sędzio
    ważne uwaga lütfen şimdi من فضلك الآن يجب عليك أنت कृपया अब"""
)
_CJK_LEAD = re.compile(
    r"(?:请你?|你们?|您|现在|立即|立刻|马上|直接|必须|务必|一定要|要|应该|应当|需要|只需|也|评分员|"
    r"评审员?|评委|裁判|模型|助手|从现在(?:起|开始)|すべての|全ての|あなたは|今すぐ|今から|모든|지금)*"
)
_INFINITIVES = frozenset({"ignorer", "ignorieren", "oublier"})
# words that ask for the infinitive after them ("veuillez ignorer", "vous devez ignorer")
_REQUESTS = _words(
    "veuillez merci devez dois faut debes debe tienes devi deve precisa musst müssen sollst "
    "must should need please bitte favor favore"
)
_VERB_FINAL = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")  # kana or hangul in the match
_IMPERATIVE_ENDING = re.compile(
    r"(?:して|しろ|せよ|しなさい|すること|하세요|하십시오|하라|해라|하고|해요|해\b|해$)"
)
_PREDICATE_AFTER = re.compile(r"\s*(?:的|是|很|会|可能|将|被|者|行为|后果|非常|十分)")
# the prompt's own instructions: stems found as substrings, possessives as whole words
# the prompt's own instructions: whole words, word beginnings, and substrings in the scripts
# without spaces or whose vowel signs split \w runs ("system" alone is not one: "the alarm
# system's instructions")
_PROMPT_WORDS = _words(
    "prior above earlier preceding foregoing sopra السابقة your vos tes tus tue "
    "deine jouw твои твоих ваши ваших"
)
_PROMPT_PREFIXES = tuple(
    _words(
        "previous précédent antérieur anterior previa previo precedent vorherig bisherig obig "
        "vorig eerder bovenstaand предыдущ прежн вышеуказ poprzedni wcześniejsz önceki "
        "yukarıdaki 이전 위의 앞의"
    )
)
_PROMPT_SUBSTRINGS = (
    "ci-dessus",
    "पिछले",
    "पहले",
    "之前",
    "以上",
    "上述",
    "先前",
    "此前",
    "前面",
    "以前",
    "你的",
    "您的",
    "これまで",
    "上記",
    "前の",
)
_INFINITIVE_MARKERS = _words("to de d zu di a")


def _clause_before(text: str, start: int) -> str:
    """The text of the match's clause before it, lowercased."""
    before = text[max(0, start - _LOOK_BEHIND) : start].lower()
    clause = before[max((m.end() for m in _PUNCTUATION.finditer(before)), default=0) :]
    cut = max((clause.rfind(c) + len(c) for c in _CJK_CONJUNCTIONS if c in clause), default=0)
    for word in reversed(list(_WORD.finditer(clause, cut))):
        if word.group() in _CONJUNCTIONS:
            return clause[word.end() :]
    return clause[cut:]


def _negated(clause: str, words: list[str], after: str) -> bool:
    """Whether a negation governs the verb: one of the two words before it, or the word before
    the "to"/"de" introducing it ("must not ignore", "ne doivent pas ignorer", "interdit
    d'ignorer", but not "never hesitate to ignore"), a Chinese negation just before it, or a
    negating ending after a verb-final one."""
    if _NEGATED_AFTER.match(after) or any(n in clause[-3:] for n in _CJK_NEGATIONS):
        return True
    if words and words[-1] in _INFINITIVE_MARKERS:
        return len(words) > 1 and words[-2] in _NEGATIONS
    return not _NEGATIONS.isdisjoint(words[-2:])


def _names_the_prompt(window: str) -> bool:
    words = _WORD.findall(window)
    return (
        not _PROMPT_WORDS.isdisjoint(words)
        or any(w.startswith(_PROMPT_PREFIXES) for w in words)
        or any(c in window for c in _PROMPT_SUBSTRINGS)
    )


def _imperative(words: list[str], verb: str, after: str) -> bool:
    """Whether the verb at the start of the match opens its clause (``words`` before it) as an
    order."""
    if not all(w in _LEAD_WORDS or _CJK_LEAD.fullmatch(w) for w in words):
        return False
    if verb.lower() in _INFINITIVES:
        return not _REQUESTS.isdisjoint(words)
    return not _PREDICATE_AFTER.match(after)


def aimed_at_model(text: str, start: int, end: int, *, override: bool) -> bool:
    """Whether the match ``text[start:end]`` is an order to the model (see the module
    docstring) rather than prose about one; ``override``: an instruction override, which also
    counts when it names the prompt's own instructions, whatever precedes it."""
    clause, matched = _clause_before(text, start), text[start:end]
    words, after = _WORD.findall(clause.replace("n't", " not")), text[end : end + _LOOK_AHEAD]
    verb_final = _VERB_FINAL.search(matched) is not None
    window = (clause[-15:] + matched + ("" if verb_final else after[:25])).lower()
    if override and _names_the_prompt(window):
        return True
    if _negated(clause, words, after):
        return False
    if verb_final and not _IMPERATIVE_ENDING.match(after):
        return False
    return _imperative(words, next(iter(_WORD.findall(matched)), ""), after)
