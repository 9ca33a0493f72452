"""False shouts (C's Bévue): a shout out of its moment. A person at the microphone can shout
at any moment, and RULES.md's Bévue covers "a bet or challenge a player may not make":
- a race phrase outside any race;
- "Grelottine !" from a player who holds none, or from a holder with no Néant to challenge;
- a claim ("Sirop gagnant !", "À Kadoc !") with nothing to claim.
At the moment a phrase belongs to (a Néant's challengers, a claim asked in turn) the players
are asked one after another: a shout there out of its turn is refused, not charged."""

from __future__ import annotations

from cdc_env.actions import IllegalActionError, Shout, valid_onset
from cdc_env.flow import Decision
from cdc_env.rulebook.phrases import CLAIM_PHRASES, GRELOTTINE_SHOUT, RACE_SHOUTS
from cdc_env.rulebook.table import Game


def allowed(game: Game, seat: int, phrase: str, pending: Decision | None) -> bool:
    """Whether `seat` shouting `phrase` now, outside a race, is a false shout (taken, and a
    Bévue where the ruleset plays them) rather than refused."""
    if phrase in RACE_SHOUTS:
        return True
    if phrase == GRELOTTINE_SHOUT:
        return not game.items[seat]["grelottine"] or pending is None or pending.kind != "grelottine"
    if phrase in CLAIM_PHRASES:
        return pending is None or not (pending.kind == "claim" and pending.reason == phrase)
    return False


def _why(game: Game, seat: int, phrase: str) -> str:
    if phrase == GRELOTTINE_SHOUT:
        if not game.items[seat]["grelottine"]:
            return f"challenged with {GRELOTTINE_SHOUT!r} without holding a Grelottine"
        return f"challenged with {GRELOTTINE_SHOUT!r} with no Néant to challenge"
    if phrase in CLAIM_PHRASES:
        return f"claimed {phrase!r} with nothing to claim"
    return f"shouted {phrase!r} when no race was on"


def false_shout(game: Game, seat: int, shout: Shout) -> None:
    """A shout from `seat` outside any race: logged, and a Bévue where Bévues are played.
    The pending decision stays as it is; the history keeps the shout for replays."""
    if not (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < game.players):
        raise IllegalActionError(f"no seat {seat!r} at this table (seats 0–{game.players - 1})")
    if not valid_onset(shout.onset_ms):
        raise IllegalActionError(
            f"a shout needs its onset in ms (a finite number ≥ 0), got {shout.onset_ms!r}")
    if not game.false_shout_allowed(seat, shout.phrase):
        phrases = (*RACE_SHOUTS, GRELOTTINE_SHOUT, *CLAIM_PHRASES)
        raise IllegalActionError(
            f"seat {seat} shouted {shout.phrase!r}, which is not taken now: "
            + (f"it is not a phrase of the game ({', '.join(phrases)})" if shout.phrase not in phrases else
               "at this moment the players it belongs to are asked for it one after another, each when asked")
        )
    game.keep_in_history(seat, shout)
    game.event("false_shout", seat=seat, phrase=shout.phrase, onset_ms=shout.onset_ms)
    if game.rules.bevue.enabled:
        game.bevue(seat, _why(game, seat, shout.phrase))
