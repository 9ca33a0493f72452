"""False shouts (C's Bévue): a race phrase shouted outside any race, or "Grelottine !" from
a player who holds none. A person at the microphone can shout at any moment."""

from __future__ import annotations

from cdc_env.actions import IllegalActionError, Shout, valid_onset
from cdc_env.rulebook.phrases import GRELOTTINE_SHOUT, RACE_SHOUTS
from cdc_env.rulebook.table import Game


def allowed(game: Game, seat: int, phrase: str) -> bool:
    """A race phrase, or "Grelottine !" without a Grelottine. (An interface refuses any other
    phrase out of its moment.)"""
    return phrase in RACE_SHOUTS or (phrase == GRELOTTINE_SHOUT and not game.items[seat]["grelottine"])



def false_shout(game: Game, seat: int, shout: Shout) -> None:
    """A shout from `seat` outside any race: logged, and a Bévue where Bévues are played.
    The pending decision stays as it is; the history keeps the shout for replays."""
    if not (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < game.players):
        raise IllegalActionError(f"no seat {seat!r} at this table (seats 0–{game.players - 1})")
    if not valid_onset(shout.onset_ms):
        raise IllegalActionError(
            f"a shout needs its onset in ms (a finite number ≥ 0), got {shout.onset_ms!r}")
    if not game.false_shout_allowed(seat, shout.phrase):
        raise IllegalActionError(
            f"seat {seat} shouted {shout.phrase!r}, which fits no moment now: outside a race a "
            f"player may shout only a race phrase ({', '.join(RACE_SHOUTS)}), or "
            f"{GRELOTTINE_SHOUT!r} without holding a Grelottine"
        )
    game.keep_in_history(seat, shout)
    game.event("false_shout", seat=seat, phrase=shout.phrase, onset_ms=shout.onset_ms)
    if game.rules.bevue.enabled:
        why = (f"challenged with {GRELOTTINE_SHOUT!r} without holding a Grelottine"
               if shout.phrase == GRELOTTINE_SHOUT else
               f"shouted {shout.phrase!r} when no race was on")
        game.bevue(seat, why)
