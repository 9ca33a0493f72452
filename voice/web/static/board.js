// The table's rendering and the WebSocket connection, shared by both pages (phone.html loads this
// file before phone.js), and the board page's own start-up (read-only: it never acts).
"use strict";
window.CDC = window.CDC || {};
(function (CDC) {
  const $ = (sel, root) => (root || document).querySelector(sel);
  CDC.$ = $;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
    return node;
  }
  CDC.el = el;

  CDC.params = new URLSearchParams(location.search);
  CDC.room = CDC.params.get("room") || "";

  // ---- errors and the status line -------------------------------------------------------
  CDC.showError = function (html, id) {
    const box = $("#errors");
    if (!box) return;
    const key = id || html;
    if (box.querySelector(`[data-key="${CSS.escape(key)}"]`)) return;
    const item = el("div", {class: "error", "data-key": key, role: "alert"});
    item.innerHTML = html;
    box.append(item);
  };
  CDC.clearError = function (id) {
    const found = document.querySelector(`#errors [data-key="${CSS.escape(id)}"]`);
    if (found) found.remove();
  };
  CDC.escape = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));

  CDC.setConnection = function (state) {
    CDC.connection = state;
    const node = $("#connection");
    if (node) {
      node.dataset.state = state;
      node.textContent = CDC.t(state);
    }
    if (state === "reconnecting") CDC.showError(CDC.escape(CDC.t("reconnecting")), "reconnecting");
    else CDC.clearError("reconnecting");
  };

  // ---- the connection: one WebSocket, reconnected with exponential back-off -------------
  // handlers: {open(ws), message(msg), close()}. Returns {send(obj|ArrayBuffer), ws()}.
  CDC.STABLE_CONNECTION_MS = 5000;
  CDC.connect = function (handlers) {
    let ws = null, attempt = 0, openedAt = null;
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws?room=" + encodeURIComponent(CDC.room);
    function open() {
      CDC.setConnection(attempt === 0 ? "connecting" : "reconnecting");
      ws = new WebSocket(url);
      ws.binaryType = "arraybuffer";
      // The back-off starts again only once a connection has held: a host that accepts and
      // closes at once (a full table, a page it refused) was asked again twice a second for ever.
      ws.onopen = () => { openedAt = performance.now(); CDC.setConnection("connected"); handlers.open(); };
      ws.onmessage = (event) => {
        if (typeof event.data !== "string") return;
        let msg;
        try { msg = JSON.parse(event.data); } catch (e) { return; }
        // The host refused something this page sent: said in the page's language where known,
        // for a moment (a stale tap, a name taken); it never stays over the game. A seat gone to
        // another phone is said by the phone itself, as the seats come (seat_lost).
        if (msg.type === "error" && msg.code !== "seat_lost") {
          const key = "error:" + msg.message;
          CDC.showError(CDC.escape(CDC.t("error") + CDC.hostText(msg)), key);
          setTimeout(() => CDC.clearError(key), CDC.HOST_ERROR_MS);
        }
        handlers.message(msg);
      };
      ws.onclose = () => {
        ws = null;
        if (handlers.close) handlers.close();
        if (openedAt !== null && performance.now() - openedAt >= CDC.STABLE_CONNECTION_MS) attempt = 0;
        openedAt = null;
        attempt += 1;
        CDC.setConnection("reconnecting");
        // 0.5 s, 1 s, 2 s, … at most 10 s, with a little jitter so phones do not come back in step.
        const delay = Math.min(10000, 500 * 2 ** (attempt - 1) * (0.8 + 0.4 * Math.random()));
        setTimeout(open, delay);
      };
    }
    open();
    return {
      send(data) {
        if (!ws || ws.readyState !== WebSocket.OPEN) return false;
        ws.send(data instanceof ArrayBuffer ? data : JSON.stringify(data));
        return true;
      },
      isOpen: () => !!ws && ws.readyState === WebSocket.OPEN,
      drop() { if (ws) ws.close(); },  // tests and the page's "hidden" path use it
    };
  };

  // ---- the table ------------------------------------------------------------------------
  const PIPS = {1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8]};
  function die(value) {
    const face = el("div", {class: "die", "aria-label": String(value), "data-value": String(value)});
    for (let i = 0; i < 9; i++) face.append(el("span", {class: (PIPS[value] || []).includes(i) ? "pip" : "nopip"}));
    return face;
  }

  CDC.renderDice = function (root, table) {
    root.replaceChildren();
    let dice = (table && table.dice) || [];
    // Between throws the table has no dice: the last throw stays, dimmed, so nobody wonders.
    const last = !dice.length && CDC.lastDice && CDC.lastDice.length;
    if (last) dice = CDC.lastDice; else if (dice.length) CDC.lastDice = dice;
    root.classList.toggle("stale", !!last);
    if (!dice.length) { root.append(el("span", {class: "muted"}, CDC.t("no_dice"))); return; }
    for (const d of dice) root.append(die(typeof d === "object" ? d.value : d));
    if (last) { root.append(el("span", {class: "throw"}, CDC.t("last_dice"))); return; }
    if (table.throw) root.append(el("span", {class: "throw"}, CDC.pick(table.throw)));
  };

  function calibrationText(cal) {
    if (!cal || cal.state === undefined) return CDC.t("cal_none");
    if (cal.state === "ok" && cal.delay_ms !== null && cal.delay_ms !== undefined) return CDC.t("cal_ok", {ms: Math.round(cal.delay_ms)});
    if (cal.state === "failed") return cal.delay_ms !== null && cal.delay_ms !== undefined
      ? CDC.t("cal_ok", {ms: Math.round(cal.delay_ms)}) + " · " + CDC.t("cal_failed") : CDC.t("cal_failed");
    if (cal.state === "rechecking") return cal.delay_ms !== null && cal.delay_ms !== undefined
      ? CDC.t("cal_ok", {ms: Math.round(cal.delay_ms)}) + " · " + CDC.t("cal_rechecking") : CDC.t("cal_rechecking");
    if (cal.state === "pending") return CDC.t("cal_pending");
    return CDC.t("cal_none");
  }
  CDC.calibrationText = calibrationText;

  function itemText(item) {
    if (typeof item === "string") return item;
    return CDC.pick(item, "label") || CDC.pick(item, "name") || CDC.pick(item);
  }

  function isBot(p) { return p.bot === true || p.human === false; }

  CDC.renderPlayers = function (root, table, mySeat) {
    root.replaceChildren();
    const players = (table && table.players) || [];
    players.forEach((p, i) => {
      const seat = p.seat !== undefined ? p.seat : i;
      const mic = p.mic || "none";
      // items: {name: count} from the host (a list of names is accepted too).
      const items = Array.isArray(p.items) ? p.items.map(itemText).filter(Boolean)
        : Object.entries(p.items || {}).map(([name, n]) => (n > 1 ? name + " ×" + n : name));
      const row = el("li", {class: "player" + (seat === mySeat ? " me" : "") + (table.question && table.question.seat === seat ? " asked" : "") + (p.turn ? " turn" : ""), "data-seat": String(seat)},
        el("div", {class: "who"},
          el("span", {class: "name"}, p.name || CDC.t("seat_n", {n: seat + 1})),
          el("span", {class: "kind"}, isBot(p) ? CDC.t("bot") : CDC.t("human")),
          el("span", {class: "score"}, String(p.score !== undefined ? p.score : ""), " ", el("small", {}, CDC.t("score")))),
        el("div", {class: "details"},
          // The Doublette: who plays with whom, and the team's sum, which is what wins.
          p.team !== undefined ? el("span", {class: "team", "data-team": String(p.team)}, CDC.t("team_with", {
            n: p.team + 1, names: (p.partners || []).map((s) => CDC.playerName(table, s)).join(CDC.t("and")),
            score: p.team_score})) : null,
          items.length ? el("span", {class: "items"}, CDC.t("items") + CDC.colon() + items.join(", ")) : null,
          !isBot(p) ? el("span", {class: "mic mic-" + mic, "data-mic": mic}, CDC.t(mic === "online" ? "mic_on" : mic === "offline" ? "mic_off" : "mic_none")) : null,
          !isBot(p) && mic === "online" && p.mic_test === "waiting" ? el("span", {class: "mic-test", "data-test": "waiting"}, CDC.t("mic_test_board")) : null,
          !isBot(p) && p.voice ? el("span", {class: "voice"}, CDC.t("voice") + CDC.colon() + CDC.voiceText(CDC.pick(p, "voice"))) : null,
          !isBot(p) ? el("span", {class: "cal cal-" + ((p.calibration && p.calibration.state) || "none"), "data-cal": (p.calibration && p.calibration.state) || "none"}, CDC.t("calibration") + CDC.colon() + calibrationText(p.calibration)) : null));
      root.append(row);
    });
  };

  CDC.playerName = function (table, seat) {
    const p = table && table.players && table.players[seat];
    return p ? (p.name || CDC.t("seat_n", {n: seat + 1})) : CDC.t("seat_n", {n: seat + 1});
  };

  CDC.raceLive = (race) => !!race && (race.running !== undefined ? !!race.running : !race.result);

  CDC.renderRace = function (root, table) {
    root.replaceChildren();
    const race = table && table.race;
    if (!race) { root.append(el("p", {class: "muted"}, CDC.t("no_race"))); root.classList.remove("live"); return; }
    root.classList.toggle("live", CDC.raceLive(race));
    const head = CDC.pick(race, "reason") || CDC.pick(race.reason, "text");
    const phrase = CDC.pick(race, "phrase");
    // The phrase wraps on a phone (« sans fin est la moisissure des bières bretonnes »), the
    // marks held to its first and last words by no-break spaces: never a lone « or » on a line.
    root.append(el("p", {class: "race-head"}, head, phrase ? " " : null, phrase ? el("strong", {}, "«\u00a0" + phrase + "\u00a0»") : null));
    const list = el("ol", {class: "shouts"});
    const shouts = (race.shouts || []).slice().sort((a, b) => (a.onset_ms ?? 1e12) - (b.onset_ms ?? 1e12));
    for (const s of shouts) {
      // "keyboard" is the session's word for a typed shout: a phone's tap, or the terminal's key.
      const by = {tap: "by_tap", keyboard: "by_tap", voice: "by_voice", bot: "by_bot"}[s.by];
      // A voice shout from a phone whose delay is unknown is decided all the same: said here.
      const unsure = s.by === "voice" && s.calibration && s.calibration !== "ok";
      list.append(el("li", {"data-seat": String(s.seat)},
        el("span", {class: "name"}, s.name || CDC.playerName(table, s.seat)),
        // The race's own phrase is in its head: a shout repeats it only where it differs
        // (a phrase that counts for that seat alone), which keeps a row on one line on a phone.
        s.phrase !== race.phrase ? el("span", {class: "phrase"}, CDC.pick(s, "phrase")) : null,
        el("span", {class: "onset"}, s.onset_ms === null || s.onset_ms === undefined ? "" : CDC.t("onset", {ms: Math.round(s.onset_ms)})),
        el("span", {class: "by"}, by ? CDC.t(by) : (s.by || "")),
        unsure ? el("span", {class: "unsure"}, CDC.t("uncalibrated")) : null));
    }
    root.append(list);
    if (race.result) root.append(el("p", {class: "race-result"}, CDC.pick(race.result)));
  };

  CDC.renderLog = function (root, table) {
    root.replaceChildren();
    const lines = (table && table.log) || [];
    for (const line of lines.slice().reverse()) root.append(el("li", {}, CDC.pick(line)));
  };

  // What the game said to the table lately (a shout too late, talk not understood, a take-back,
  // a late friend seated), newest first: the log has the moves, this has the table's words.
  CDC.renderSaid = function (root, table) {
    root.replaceChildren();
    const lines = (table && table.said) || [];
    if (!lines.length) { root.append(el("li", {class: "muted"}, CDC.t("nothing_said"))); return; }
    for (const line of lines.slice().reverse()) root.append(el("li", {"data-n": String(line.n)}, CDC.pick(line)));
  };

  CDC.renderOver = function (root, table) {
    if (!root) return;
    const over = table && table.over;
    root.hidden = !over;
    if (over) {
      const w = table.winner;
      // A team wins together (the Doublette): every seat of it is named.
      const team = Array.isArray(table.winners) && table.winners.length > 1 ? table.winners : null;
      const name = w === null || w === undefined ? "" : (typeof w === "number" ? CDC.playerName(table, w) : CDC.pick(w, "name"));
      root.textContent = team ? CDC.t("won_by_team", {names: team.map((s) => CDC.playerName(table, s)).join(CDC.t("and"))})
        : name ? CDC.t("won_by", {name}) : CDC.t("over");
      root.append(el("small", {class: "again"}, CDC.t("again_hint")));
    }
  };

  CDC.renderQuestionText = function (table) {
    const q = table && table.question;
    if (!q) return "";
    return CDC.pick(q, "text");
  };

  // ---- the board page -------------------------------------------------------------------
  // The way in, while a human seat is free (the game's start, a late friend, a seat the host gave
  // to a new phone): the /trust page's and the table's addresses as QR codes the host makes.
  function renderJoin(join, seats) {
    const free = (seats || []).filter((s) => s.human && !s.taken);
    const show = !!join && free.length > 0;
    $("#join").hidden = !show;
    $(".board-grid").classList.toggle("joining", show);
    if (!show) return;
    for (const to of ["trust", "phone"]) {
      const code = $(`#join-${to}-code`);
      if (!code.getAttribute("src")) code.src = "/join.svg?to=" + to + "&room=" + encodeURIComponent(CDC.room);
      $(`#join-${to}-address`).textContent = join[to];
    }
    $("#join-free").textContent = CDC.t("join_free") + CDC.colon()
      + free.map((s) => CDC.t("seat_n", {n: s.seat + 1}) + (s.name ? " (" + s.name + ")" : "")).join(", ");
  }

  function startBoard() {
    CDC.applyStatic();
    CDC.bindLangSwitch($("#lang"));
    let table = null, join = null, seats = null;
    function render() {
      renderJoin(join, seats);
      if (!table) return;
      CDC.renderDice($("#dice"), table);
      CDC.renderPlayers($("#players"), table, -1);
      const q = table.question;
      $("#question").textContent = q ? CDC.renderQuestionText(table) : CDC.t("no_question");
      CDC.renderRace($("#race"), table);
      CDC.renderSaid($("#said"), table);
      CDC.renderLog($("#log"), table);
      CDC.renderOver($("#over"), table);
    }
    CDC.onLang.push(render);
    if (!CDC.room) { CDC.showError(CDC.escape(CDC.t("no_room")), "no_room"); return; }
    const conn = CDC.connect({
      open() { conn.send({type: "hello", role: "board", token: null, lang: CDC.lang}); },
      message(msg) {
        if (msg.type === "table") { table = msg; window.cdcTable = msg; }
        else if (msg.type === "join") join = msg;
        else if (msg.type === "seats") seats = msg.seats;
        else return;
        render();
      },
    });
    CDC.conn = conn;
  }

  if (document.body && document.body.dataset.page === "board") startBoard();
})(window.CDC);
