"""The table as JSON for the phones and the board (docs/web.md, the `table` message), with
French and English texts.

English comes from the live table's own words (voice/table.py, cdc_env/play.py); French from
the French lexicon (configs/voice/fr.yaml: the phrase a player would say for each choice) and
from the tables below for the frequent events, English being the fallback. Built on the
session's thread; the engine knows nothing of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cdc_env.actions import (
    BIRDS,
    Action,
    BeauSirop,
    BetOnSuccess,
    BetSum,
    BirdBet,
    BuyCul,
    ChallengeGrelottine,
    ChallengeSoufflette,
    CoucheSirop,
    DeclareCivet,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
    UseGrelottine,
)
from cdc_env.game import RACE_PHRASES, Decision
from cdc_env.play import describe_event, words
from cdc_env.rulebook.house import REGISTRY as HOUSE_RULES
from cdc_env.rulebook.races import LAST_SHOUTER_LOSES
from cdc_env.rules import shipped_configs
from voice.lexicon import LexiconError, load_lexicon
from voice.session import PlaySession, Said, race_phrase_of
from voice.table import option_label, question, verb

LOG_LINES = 40
SAID_LINES = 8  # what the game said to the table lately (the board shows them, a phone its own)
FR_LEXICON = shipped_configs("voice") / "fr.yaml"  # (the source tree's, or an installed package's)

VERBS_FR: dict[type[Action], str] = {
    Roll: "lancer les dés", DeclareCivet: "annoncer un Civet", UseGrelottine: "utiliser ta Grelottine",
    BuyCul: "acheter le cul (le troisième dé)", Sirop: "siroter le dé impair",
    BirdBet: "parier un oiseau sur le dé du sirop", BeauSirop: "dire Beau-Sirop", CoucheSirop: "dire Couche-Sirop",
    BetSum: "parier sur la somme de la relance", ChallengeSoufflette: "défier un joueur à la Soufflette",
    KeepDice: "choisir les dés à garder", ChallengeGrelottine: "défier le lanceur à la Grelottine",
    UseBoucliette: "l'annuler avec ta Boucliette", BetOnSuccess: "parier sur sa réussite", Shout: "crier",
}
PASS_FR = {"sirop": "garder la Chouette", "claim": "ne rien dire", "soufflette_keep": "relancer les trois dés"}
# The house rules' decisions are answered "yes" (BetOnSuccess) or passed (docs/rules.md, House rules).
HOUSE_YES_FR = {
    "verdier_bet": "crier « Vert-Linette ! » (parier sur 2, 4, 6)",
    "civet_double": "crier « Civet ! » (doubler le Civet avec le tien)",
    "attrape_oiseau": "crier « Attrape-oiseau ! » (prendre le sirop à son compte)",
    "flan_use": "crier « Tatan elle fait des Flans ! » (ses points comptent à l'envers)",
}
ITEMS_FR = {"grelottine": "Grelottine", "civet": "Civet", "boucliette": "Boucliette", "flan": "Flan"}


def french_phrases(path: Path = FR_LEXICON) -> dict[str, str]:
    """Intent -> its first French phrase (empty if the lexicon cannot be read: English then)."""
    try:
        return {intent: phrases[0] for intent, phrases in load_lexicon(path).intents.items() if phrases}
    except (LexiconError, OSError):
        return {}


def _phrase(name: str, french: dict[str, str]) -> str:
    return french.get(name, words(name))


def verb_fr(action: Action, decision: Decision) -> str:
    if isinstance(action, Pass):
        if action in decision.bevues:  # (the pass is announced here: « Couche-Sirop ! »)
            return "ne rien dire (une Bévue ici)"
        return PASS_FR.get(decision.kind, "passer")
    if isinstance(action, Roll) and decision.kind == "challenge_roll":
        return "lancer le défi"
    if isinstance(action, BetOnSuccess) and decision.kind in HOUSE_YES_FR:
        return HOUSE_YES_FR[decision.kind]
    return VERBS_FR.get(type(action), words(action.kind))


def option_label_fr(action: Action, decision: Decision, names: Sequence[str], french: dict[str, str]) -> str:
    if isinstance(action, BirdBet):
        return f"parier {BIRDS[action.face - 1].capitalize()} ({action.face})"
    if isinstance(action, KeepDice):
        return f"garder {' '.join(map(str, action.keep))}" if action.keep else "relancer les trois dés"
    if isinstance(action, BetSum):
        return f"parier sur {action.total}"
    if isinstance(action, Shout):
        return f"crier « {_phrase(action.phrase, french)} »"
    if isinstance(action, ChallengeSoufflette):
        return f"défier {names[action.target]} à la Soufflette"
    return verb_fr(action, decision)


def question_json(session: PlaySession, decision: Decision, options: Sequence[Action],
                  french: dict[str, str]) -> dict[str, Any]:
    """The question put to a human: its text and its options, in the order of the terminal's
    numbered menu (a `choose` names an index of this list); staked choices last."""
    names = [p.name for p in session.players]
    assert decision.seat is not None
    listed: list[dict[str, Any]] = [{"label_fr": option_label_fr(a, decision, names, french),
                                     "label_en": option_label(a, decision, names)} for a in options]
    stakes = []
    for index, (combination, allowed) in enumerate(decision.stakes, len(options)):
        assert decision.staked is not None  # a decision with stakes says what they stake
        action = decision.staked(combination, allowed.start)
        what = words(combination)
        listed.append({"label_fr": f"{verb_fr(action, decision)} sur {what}",
                       "label_en": f"{verb(action, decision)} on {what}"})
        stakes.append({"option": index, "combination": combination, "min": allowed.start, "max": allowed.stop - 1})
    kinds = list(dict.fromkeys([verb_fr(a, decision) for a in options]
                               + ([verb_fr(decision.staked(combination, allowed.start), decision)
                                   for combination, allowed in decision.stakes[:1] if decision.staked])))
    text_fr = f"{names[decision.seat]} : " + (" ou ".join([", ".join(kinds[:-1]), kinds[-1]]) if len(kinds) > 1
                                               else kinds[0])
    return {"seat": decision.seat, "kind": decision.kind, "text_fr": text_fr,
            "text_en": question(names[decision.seat], decision, options), "options": listed, "stakes": stakes}


def _who(names: Sequence[str]) -> Callable[[Any], str]:
    def who(seat: Any) -> str:
        if isinstance(seat, list):
            return ", ".join(who(s) for s in seat) or "personne"
        return "la table" if seat is None else names[seat]
    return who


def _race_fr(e: dict[str, Any], who: Callable[[Any], str]) -> str:
    place = "dernier" if e["race"] in LAST_SHOUTER_LOSES else "premier"
    race = RACES_FR.get(e["race"], words(e["race"]))
    if len(e["tied"]) > 1:
        return f"  course {race} : {who(e['tied'])} ex æquo {place}s"
    if e["tied"]:
        return f"  course {race} : {who(e['tied'][0])} {place}"
    if e.get("shouts"):  # a last-loses race with nobody last: alone against the clock (S), in time
        return f"  course {race} : crié à temps, personne ne perd"
    return f"  course {race} : personne n'a crié à temps"


# Why a score changes (an event's `reason`), in the game's French words: the combinations the
# scoring names (cdc_env/combinations.py), then the rules' own reasons, the house rules' last.
REASONS_FR: dict[str, str] = {
    "cul_de_chouette": "un Cul de Chouette", "suite_velutee": "une Suite Velutée", "artichette": "une Artichette",
    "bleu_rouge": "un Bleu-Rouge", "chouette_velute": "une Chouette-Velute", "velute": "une Velute",
    "chouette": "une Chouette", "suite": "une Suite", "soufflette": "une Soufflette", "flan": "un Flan",
    "neant_souffle": "un Néant soufflé", "neant": "un Néant",
    "achat_du_cul": "l'achat du cul", "patte_de_canard": "« Patte de canard ! »", "raitournelle": "une Raitournelle",
    "pelican": "le Pélican", "velutee_tie": "une égalité sur la Velutée", "suite_last": "le dernier cri de la Suite",
    "chouette_velute_tie": "une égalité sur la Chouette-Velute",
    "chouette_velute_missed": "une Chouette-Velute que personne n'a criée",
    "sirop_success": "un sirop réussi", "sirop_failure": "un sirop raté", "bird_bet_won": "un oiseau gagnant",
    "bird_bet_lost": "un oiseau perdant", "sirop_bet_below_minimum": "un pari de sirop sous le minimum",
    "civet_made": "un Civet réussi", "civet_failed": "un Civet raté", "civet_bet_won": "un pari gagné sur le Civet",
    "civet_bet_lost": "un pari perdu sur le Civet", "grelottine_won": "une Grelottine gagnée",
    "grelottine_lost": "une Grelottine perdue", "challenge_bet_won": "un pari gagné sur la Grelottine",
    "challenge_bet_lost": "un pari perdu sur la Grelottine", "bleu_rouge_bet_won": "la bonne somme du Bleu-Rouge",
    "soufflette_made": "une Soufflette réussie", "soufflette_won": "une Soufflette gagnée",
    "soufflette_lost": "une Soufflette subie", "soufflette_failed": "une Soufflette ratée",
    "soufflette_last_throw": "le dernier jet de la Soufflette",
    # house rules
    "verdier_won": "« Vert-Linette ! » gagné (2, 4, 6)", "verdier_lost": "« Vert-Linette ! » perdu",
    "tichette_won": "« Tichette ! » réclamée seul", "tichette_lost": "« Tichette ! » réclamée à plusieurs",
    "contre_sirop": "le Contre-Sirop (« J'apprécie les fruits au sirop ! »)",
    "cul_de_chouette_contre": "un Cul de Chouette contré", "flan_siroted": "le Flan rendu (la Chouette sirotée)",
    "chante_sloubi": "le Chante-Sloubi (un départ en cours de partie)",
}
# Why an item comes or goes.
ITEM_REASONS_FR: dict[str, str] = {
    "neant": "un Néant", "mecreant": "« Mécréant ! »", "a_kadoc": "« À Kadoc ! »", "civet_sirote": "un sirop raté",
    "grelottine_used": "utilisée", "grelottine_challenge": "un défi", "challenge_cancelled": "un défi annulé",
    "civet_declared": "un Civet annoncé",
    # house rules
    "civet_doubled": "le Civet doublé", "flan_used": "« Tatan elle fait des Flans ! »",
    "flan_kept": "un Néant flanné : le Flan revient",
}


# The races by their engine names, in French (a Bévue's reason names the race it was shouted in).
RACES_FR: dict[str, str] = {
    "chouette_velute": "la Chouette-Velute", "suite": "la Suite", "suite_tie": "l'égalité de la Suite",
    "chouette_velute_tie": "l'égalité de la Chouette-Velute", "suite_velutee": "la Suite Velutée",
    "velutee_tie": "l'égalité de la Velutée", "artichette": "l'Artichette", "neant_souffle": "le Néant soufflé",
    "pelican": "le Pélican", "passe_montagne": "le Passe-Montagne", "zbradaraldjan": "le Zbradaraldjan",
    "fort_heureusement": "« Fort heureusement »", "tichette": "la Tichette", "contre_sirop": "le Contre-Sirop",
    "cul_de_chouette_contre": "le Cul de Chouette contré",
}
# Why dice are thrown (a `dice` event's `reason`), in French.
DICE_REASONS_FR: dict[str, str] = {
    "first_player": "qui commence", "chouettes": "les chouettes", "cul": "le cul", "sirop": "le sirop",
    "soufflette": "la Soufflette", "suite_tie": "l'égalité de la Suite",
    "chouette_velute_tie": "l'égalité de la Chouette-Velute", "velutee": "la Velutée",
    "pelican_tie": "l'égalité du Pélican", "neant_souffle_tie": "l'égalité du Néant soufflé",
    "grelottine_combination": "la combinaison de la Grelottine", "bleu_rouge": "le Bleu-Rouge",
    "robobrol": "le Robobrol",
}
# A Bévue's reason (the engine's English `why`: cdc_env/rulebook/), in French.
BEVUES_FR: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"shouted '(\w+)' when no race was on"), lambda m: f"« {words(m[1])} » crié hors de toute course"),
    (re.compile(r"shouted '(\w+)' in the (\w+) race"),
     lambda m: f"« {words(m[1])} » crié dans {RACES_FR.get(m[2], words(m[2]))}"),
    (re.compile(r"challenged with '(\w+)' without holding a Grelottine"),
     lambda m: "« Grelottine ! » sans avoir de Grelottine"),
    (re.compile(r"challenged with '(\w+)' with no Néant to challenge"),
     lambda m: "« Grelottine ! » sans Néant à défier"),
    (re.compile(r"claimed '(\w+)' with nothing to claim"), lambda m: f"« {words(m[1])} » sans rien à réclamer"),
    (re.compile(r"said nothing on a sirop \(Couche-Sirop or File-Sirop\)"),
     lambda m: "rien dit sur un sirop (« Couche-Sirop ! » ou « File-Sirop ! »)"),
    (re.compile(r"named the chouette's own bird instead of Beau-Sirop"),
     lambda m: "l'oiseau de la Chouette nommé au lieu de « Beau-Sirop ! »"),
    (re.compile(r"bet on a sirop below the minimum score"), lambda m: "un pari sur un sirop sous le score minimum"),
    (re.compile(r"a Soufflette below the minimum score"), lambda m: "une Soufflette sous le score minimum"),
    (re.compile(r"shouted Mécréant below the minimum score"), lambda m: "« Mécréant ! » crié sous le score minimum"),
]


def bevue_fr(why: str) -> str:
    """A Bévue's reason in French (one the engine gives that is not listed stays as it is)."""
    for pattern, french in BEVUES_FR:
        if (match := pattern.fullmatch(why)) is not None:
            return french(match)
    return why


def _score_fr(e: dict[str, Any], who: Callable[[Any], str]) -> str:
    if e["reason"] == "bevue":
        reason = "une Bévue" + (f" ({bevue_fr(e['why'])})" if e.get("why") else "")
    elif e["reason"] == "flan" and "by" in e:  # the Flan's use: the throw's points inverted
        reason = f"le Flan de {who(e['by'])} (« Tatan elle fait des Flans ! »)"
    else:
        reason = REASONS_FR.get(e["reason"], words(e["reason"]))
    line = f"  {who(e['seat'])} {e['delta']:+d} pour {reason}"
    if e["delta"] != e["points"]:  # held by the cap (a gain) or at 0 (a loss, negative_scores: false)
        line += f" (sur {e['points']:+d}, {'plafonné' if e['points'] > 0 else 'retenu à 0'})"
    return f"{line} → {e['score']}"


def _win_fr(e: dict[str, Any], who: Callable[[Any], str]) -> str:
    if "team" in e:  # the Doublette: the team's sum won, both players win
        return f"*** {' et '.join(who(s) for s in e['team'])} gagnent en équipe avec {e['team_score']} ***"
    return f"*** {who(e['seat'])} gagne avec {e['score']} ***"


# The frequent events in French (the others fall back to English).
EVENTS_FR: dict[str, Callable[[dict[str, Any], Callable[[Any], str]], str]] = {
    "first_player": lambda e, who: f"{who(e['seat'])} commence",
    "turn_start": lambda e, who: f"— tour {e['turn']} : {who(e['seat'])} lance",
    "dice": lambda e, who: f"  dés ({DICE_REASONS_FR.get(e['reason'], words(e['reason']))})"
                           + ("" if e["seat"] is None else f" ({who(e['seat'])})") + f" : {e['values']}",
    "combination": lambda e, who: f"  {who(e['seat'])} : {e['dice']} = {words(e['combination'])} "
                                  f"({e['value']})" + (", courses : " + ", ".join(RACES_FR.get(r, words(r))
                                                                                  for r in e["races"])
                                                       if e["races"] else ""),
    "score": _score_fr,
    "item": lambda e, who: f"  {who(e['seat'])} {'gagne' if e['change'] > 0 else 'utilise'} "
                           f"{ITEMS_FR.get(e['item'], e['item'])} "
                           f"({ITEM_REASONS_FR.get(e['reason'], words(e['reason']))})",
    "shout": lambda e, who: f"  {who(e['seat'])} crie {words(e['phrase'])} à {e['onset_ms']:.0f} ms",
    "false_shout": lambda e, who: f"  {who(e['seat'])} crie {words(e['phrase'])} hors de toute course",
    "race": _race_fr,
    "win": _win_fr,
    "civet": lambda e, who: f"  {who(e['seat'])} annonce un Civet de {e['stake']} sur {words(e['combination'])}",
    "grelottine": lambda e, who: f"  {who(e['seat'])} défie {who(e['challenged'])} : Grelottine de "
                                 f"{e['stake']} sur {words(e['combination'])}",
    "challenge_result": lambda e, who: f"  {who(e['challenged'])} {'réussit' if e['made'] else 'rate'} "
                                       f"(défi de {who(e['challenger'])})",
    "sirop": lambda e, who: f"  {who(e['seat'])} sirote la Chouette de {e['face']}",
    "bird_bet": lambda e, who: f"  {who(e['seat'])} parie {BIRDS[e['face'] - 1].capitalize()} ({e['face']})",
    "buy_cul": lambda e, who: f"  {who(e['seat'])} achète le cul à {who(e['from_seat'])}",
    "boucliette": lambda e, who: f"  {who(e['seat'])} annule le défi de {who(e['challenger'])} avec une Boucliette",
    "soufflette": lambda e, who: f"  {who(e['seat'])} défie {who(e['target'])} à la Soufflette",
    "sum_bet": lambda e, who: f"  {who(e['seat'])} parie sur une somme de {e['total']}",
    "relaunch": lambda e, who: f"  {who(e['seat'])} relance {e['dice']} (somme {e['total']}) : "
                               f"{words(e['combination'])}",
    "jarret": lambda e, who: f"  {who(e['seat'])} : un Jarret {e['dice']}",
    "beau_sirop": lambda e, who: f"  {who(e['seat'])} parie Beau-Sirop ({e['face']})",
    "claim": lambda e, who: f"  {who(e['seat'])} annonce : {words(e['phrase'])}",
    "join": lambda e, who: f"+++ {e['name']} rejoint la partie à la place {e['seat'] + 1} (Chante-Sloubi)",
    "bet_on_success": lambda e, who: f"  {who(e['seat'])} parie sur la réussite",
    "bet_unclaimed": lambda e, who: f"  {who(e['seat'])} n'a pas réclamé son pari gagnant",
    "velutee_tie": lambda e, who: f"  égalité sur la Velutée entre {who(e['seats'])} : {e['dice']} = "
                                  f"{words(e['combination'])}",
    # house rules (docs/rules.md, House rules)
    "verdier_bet": lambda e, who: f"  {who(e['seat'])} crie « Vert-Linette ! »",
    "civet_doubled": lambda e, who: f"  {who(e['seat'])} double le Civet de {who(e['declarer'])} "
                                    f"(mise × {e['multiplier']})",
    "attrape_oiseau": lambda e, who: f"  {who(e['seat'])} crie « Attrape-oiseau ! » et prend à son compte le "
                                     f"sirop de {who(e['thrower'])} (Chouette de {e['face']})",
    "flan_used": lambda e, who: f"  {who(e['seat'])} crie « Tatan elle fait des Flans ! » : les points de "
                                f"{who(e['thrower'])} comptent à l'envers",
    "robobrol": lambda e, who: f"  {who(e['seat'])} : « Robobrol ! », il relance les trois dés",
}


# (as the pages' own words for these, voice/web/static/i18n.js)
VOICE_FR = {"listening": "à l'écoute", "keyboard only": "au toucher seulement", "say it again": "répétez"}


def voice_fr(status: str, french: dict[str, str]) -> str:
    """A human's voice status (the session's English words) in French."""
    heard = re.fullmatch(r"heard « (.*) »( …)?", status)
    if heard is not None:
        # The phrases in words (cdc_env.play.words), their intents'; an answer said in parts
        # (« civet, velute ») names each, « … » where more is awaited.
        said = [next((name for name in french if words(name) == part), part.replace(" ", "_"))
                for part in heard[1].split(", ")]
        return f"entendu « {', '.join(_phrase(intent, french) for intent in said)} »" + (heard[2] or "")
    return VOICE_FR.get(status, status)


def log_line(event: dict[str, Any], names: Sequence[str]) -> dict[str, str]:
    english = describe_event(event, names)
    line = EVENTS_FR.get(event["type"])
    try:
        french = line(event, _who(names)) if line is not None else english
    except (KeyError, IndexError, TypeError):  # an event of another shape: the English is right
        french = english
    return {"fr": french.strip(), "en": english.strip()}


def race_phrase(reason: str, pending: Decision | None) -> str:
    """The phrase of the race `reason`: the pending race's own (a house rule's race, such as the
    Tichette, is in no table: the phone said « touchez si vous criez «  » »), else the table's,
    else the house rule's that runs it."""
    if pending is not None:
        return race_phrase_of(pending)
    if reason in RACE_PHRASES:
        return RACE_PHRASES[reason]
    rule = next((rule for rule in HOUSE_RULES.values() if reason in rule.races and rule.phrases), None)
    return rule.phrases[0] if rule is not None else ""


def race_json(session: PlaySession, french: dict[str, str]) -> dict[str, Any] | None:
    """The race under way or just run: its shouts with onsets, and the engine's verdict."""
    names = [p.name for p in session.players]
    pending = session.state.pending
    racing = pending is not None and pending.kind == "race"
    if not racing and not session.race_now:
        return None
    log = session.state.log
    result = None
    reason = pending.reason if racing and pending is not None else ""
    if not racing:
        last = next((e for e in reversed(log) if e["type"] == "race"), None)
        if last is not None:
            result = log_line(last, names)
            reason = last["race"]
    phrase = race_phrase(reason, pending if racing else None)
    shouts = [{"seat": s.seat, "name": names[s.seat], "phrase": s.phrase, "phrase_fr": _phrase(s.phrase, french),
               "phrase_en": words(s.phrase), "onset_ms": round(s.onset_ms, 1), "by": s.by}
              for s in sorted(session.race_now, key=lambda s: s.onset_ms)]
    # Each seat's own phrase where it is not the race's (a Suite Velutée's thrower: « patte de
    # canard »): a phone shows its own player's.
    answers = session.state.table.race_answers if racing else {}
    own = [{"seat": seat, "phrase": phrases[0], "phrase_fr": _phrase(phrases[0], french),
            "phrase_en": words(phrases[0])} for seat, phrases in answers.items() if phrases and phrases[0] != phrase]
    return {"reason": reason, "reason_fr": RACES_FR.get(reason, words(reason)), "reason_en": words(reason),
            "phrase": phrase, "phrase_fr": _phrase(phrase, french), "phrase_en": words(phrase),
            "own": own, "running": racing, "shouts": shouts, "result": result}


def said_json(number: int, line: Said, french: dict[str, str]) -> dict[str, Any]:
    """A line said to the table, in both languages, with its phrase in the page's words."""
    fr = line.fr if line.phrase is None else line.fr.replace("{phrase}", _phrase(line.phrase, french))
    return {"n": number, "seat": line.seat, "en": str(line), "fr": fr}


def table_json(session: PlaySession, question_: dict[str, Any] | None, voices: dict[int, str],
               said: Sequence[tuple[int, Said]], french: dict[str, str]) -> dict[str, Any]:
    """The whole table (the mic and calibration of each seat are added by the room)."""
    state = session.state
    names = [p.name for p in session.players]
    table = state.table
    # At a table in teams (the Doublette) each player's team, numbered from 0 in its first seat's
    # order, partners and the sum that wins; other tables' players have no such fields.
    teams = sorted(set(state.teams.values()))
    in_teams = any(len(team) > 1 for team in teams)
    players = [{"seat": seat, "name": player.name, "score": state.scores[seat],
                "items": {ITEMS_FR.get(k, k): n for k, n in state.items[seat].items() if n},
                "human": player.human, "bot": not player.human,
                "turn": seat == state.turn_seat and state.winner is None,
                "voice": voices.get(seat, "") if player.human else "",
                "voice_fr": voice_fr(voices.get(seat, ""), french) if player.human else "",
                "voice_en": voices.get(seat, "") if player.human else "",
                **({"team": teams.index(state.teams[seat]),
                    "partners": [s for s in state.teams[seat] if s != seat],
                    "team_score": state.team_score(seat)} if in_teams else {})}
               for seat, player in enumerate(session.players)]
    throw = None
    if table.dice and table.combination:
        what = words(table.combination)
        owner = names[table.thrower] if table.thrower is not None else ""
        throw = {"fr": f"{owner} : {what}", "en": f"{owner}'s throw: {what}"}
    return {"type": "table", "ruleset": state.rules.name, "turn": state.turn_number,
            "dice": list(table.dice or []), "throw": throw, "players": players, "question": question_,
            "race": race_json(session, french), "log": [log_line(e, names) for e in state.log[-LOG_LINES:]],
            "said": [said_json(n, line, french) for n, line in said[-SAID_LINES:]], "over": state.winner is not None,
            "winner": state.winner,
            # A team wins together (the Doublette): every seat of it, the winner's first.
            "winners": [] if state.winner is None else [state.winner, *(s for s in state.teams[state.winner]
                                                                        if s != state.winner)]}
