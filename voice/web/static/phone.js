// The phone page: seat, table, choices, the shout button, the microphone streamed to the host
// and the clock exchange (docs/web.md). board.js (loaded first) renders the table and connects.
"use strict";
(function (CDC) {
  const $ = CDC.$, el = CDC.el;
  const TOKEN_KEY = "cdc.token." + CDC.room;
  const state = {
    seat: null, token: CDC.kept(TOKEN_KEY), table: null, seats: null,
    mic: "none", // local capture: "none" (never started) | "on" | "off"
    stream: 0, streamBase: null, micStarting: false, answered: null, warmup: 0, run: null,
    live: false, // welcomed on the current socket
    note: null, noteSeen: null, noteTimer: null, // the line about this player shown (renderNote)
  };
  window.cdcPhone = state; // read by the browser tests
  window.cdcPhoneAudio = () => audio; // the tests suspend it as a sleeping phone would
  let conn = null, audio = null, wakeLock = null, pinger = null, pingId = 0;

  // ---- clock: ping/pong/clock (one NTP sample per round trip) ------------------------------
  function startPinging() {
    stopPinging();
    const began = performance.now();
    const tick = () => {
      conn.send({type: "ping", id: ++pingId, t1: performance.now()});
      // Every ~100 ms for the first 2 s (a burst to find fast round trips), then every second
      // (keeps Wi-Fi out of power saving, tracks drift).
      pinger = setTimeout(tick, performance.now() - began < 2000 ? 100 : 1000);
    };
    tick();
  }
  function stopPinging() { if (pinger) clearTimeout(pinger); pinger = null; }

  // ---- the microphone ----------------------------------------------------------------------
  function newStream() {
    // A new stream: numbering restarts at 0 from the next chunk the worklet hands over.
    state.stream += 1;
    state.streamBase = null;
    conn.send({type: "audio", stream: state.stream, rate: 16000, state: "on"});
  }

  // The first second of a capture comes in bursts and stalls (the audio pipeline starting, on a
  // busy phone the page itself starting): samples stamped then would pin the sample clock wrong
  // (the host fits the lower envelope of the stamps), so the stream begins after it.
  const WARMUP_CHUNKS = 10;

  function onChunk(first, pcm, phoneMs) {
    if (state.mic !== "on" || !state.live || !conn.isOpen()) return;
    if (state.warmup > 0) {
      state.warmup -= 1;
      if (state.warmup === 0) newStream();
      return;
    }
    if (state.streamBase === null) state.streamBase = first;
    const frame = new ArrayBuffer(16 + pcm.length * 2);
    const head = new DataView(frame);
    head.setBigInt64(0, BigInt(first - state.streamBase), true);
    head.setFloat64(8, phoneMs, true);
    new Int16Array(frame, 16).set(pcm);
    conn.send(frame);
  }

  const RESUME_MS = 3000; // an audio context not running by then waits for a tap
  async function startMic() {
    if (state.mic === "on" || state.micStarting) return;
    if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) { showNotSecure(); return; }
    state.micStarting = true;
    CDC.clearError("mic_failed");
    CDC.clearError("mic_hidden");
    let media = null, ctx = null;
    try {
      media = await navigator.mediaDevices.getUserMedia({audio: {
        echoCancellation: false, noiseSuppression: false, autoGainControl: false, channelCount: 1}});
      let source;
      try { // Chromium resamples for us
        ctx = new AudioContext({sampleRate: 16000});
        source = ctx.createMediaStreamSource(media);
      } catch (e) { // Firefox: a context at 16 kHz refuses a microphone at another rate (here, not in
        // the constructor): the native rate, resampled in the worklet
        if (ctx) ctx.close().catch(() => {});
        ctx = new AudioContext();
        source = ctx.createMediaStreamSource(media);
      }
      // iOS resumes a context only inside a tap's handler chain: started again by the page
      // coming back (no tap), the promise may never settle, and the button would do nothing.
      const resumed = ctx.resume();
      await Promise.race([resumed, new Promise((_, fail) => setTimeout(() => fail(new Error(CDC.t("mic_needs_tap"))), RESUME_MS))]);
      await ctx.audioWorklet.addModule("/static/worklet.js");
      const node = new AudioWorkletNode(ctx, "pcm-capture", {numberOfInputs: 1, numberOfOutputs: 1, channelCount: 1, channelCountMode: "explicit"});
      node.port.onmessage = (event) => onChunk(event.data.first, event.data.pcm, performance.now());
      source.connect(node);
      node.connect(ctx.destination); // the worklet writes silence; connecting keeps it pulled
      for (const track of media.getAudioTracks()) track.addEventListener("ended", () => stopMic("ended"));
      // iOS interrupts a context (a call, the phone locked): said, and the button comes back.
      ctx.addEventListener("statechange", () => { if (audio && audio.ctx === ctx && ctx.state !== "running") stopMic("ended"); });
      audio = {media, ctx, node};
      state.mic = "on";
      state.warmup = WARMUP_CHUNKS; // then newStream()
      requestWakeLock();
    } catch (e) {
      if (media) for (const track of media.getTracks()) track.stop();
      if (ctx && !(audio && audio.ctx === ctx)) ctx.close().catch(() => {}); // a failed start leaves no context running
      const refused = e && (e.name === "NotAllowedError" || e.name === "SecurityError");
      CDC.showError(CDC.escape(refused ? CDC.t("mic_refused") : CDC.t("mic_failed") + (e && e.message ? e.message : e)), "mic_failed");
      state.mic = state.mic === "on" ? "on" : "off";
    } finally {
      state.micStarting = false;
      render();
    }
  }

  function stopMic(why) {
    if (!audio) return;
    const {media, ctx} = audio;
    audio = null;
    for (const track of media.getTracks()) track.stop();
    ctx.close().catch(() => {});
    state.mic = "off";
    if (why !== "lost") conn.send({type: "audio", stream: state.stream, rate: 16000, state: "off"}); // (lost: not ours to say)
    if (why === "hidden") CDC.showError(CDC.escape(CDC.t("mic_hidden")), "mic_hidden");
    render();
  }
  CDC.stopMic = stopMic; // the tests stop the stream as a sleeping phone would

  async function requestWakeLock() {
    if (!("wakeLock" in navigator) || document.visibilityState !== "visible") return;
    try { wakeLock = await navigator.wakeLock.request("screen"); } catch (e) { wakeLock = null; }
  }

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      if (state.mic === "on") { state.resumeMic = true; stopMic("hidden"); }
    } else if (state.resumeMic) {
      state.resumeMic = false;
      startMic(); // works where the permission holds; iOS may need the button again
    }
  });

  // ---- seats -------------------------------------------------------------------------------
  function claim(seat) {
    const name = ($("#name").value || "").trim() || null;
    if (name) CDC.keep("cdc.name", name);
    conn.send({type: "claim", seat, name});
  }

  function renderSeats() {
    const box = $("#seats");
    box.hidden = state.seat !== null || !state.seats;
    if (box.hidden) return;
    // Rebuilt only when the seats change: a table update must not swap a button under a finger.
    const key = JSON.stringify(state.seats) + CDC.lang;
    if (key === renderSeats.shown) return;
    renderSeats.shown = key;
    const list = $("#seat-list");
    list.replaceChildren();
    const free = state.seats.filter((s) => s.human && !s.taken);
    if (!free.length) list.append(el("p", {class: "muted"}, CDC.t("no_free_seat")));
    for (const s of state.seats) {
      if (!s.human) continue;
      list.append(el("button", {class: "big seat", "data-seat": String(s.seat), disabled: s.taken, onclick: () => claim(s.seat)},
        CDC.t("seat_n", {n: s.seat + 1}) + (s.name ? " — " + s.name : "") + (s.taken ? " (" + CDC.t("taken") + ")" : "")));
    }
  }

  // ---- the table ---------------------------------------------------------------------------
  function renderQuestion() {
    const table = state.table, box = $("#choices"), text = $("#question-text");
    const q = table && table.question;
    // Rebuilt only when the question changes (not on every table update: a button must not be
    // swapped under a finger, nor a stake being typed lost).
    const answered = !!q && state.answered === q.id; // (a table sent meanwhile is no new question)
    const key = JSON.stringify([q, state.seat, answered, CDC.lang, q && q.seat !== state.seat && CDC.playerName(table, q.seat)]);
    if (key === renderQuestion.shown) return;
    renderQuestion.shown = key;
    box.replaceChildren();
    $("#ask").classList.toggle("mine", !!q && q.seat === state.seat);
    if (!q) { text.textContent = CDC.t("no_question"); return; }
    if (q.seat !== state.seat) {
      text.textContent = CDC.t("waiting_for", {name: CDC.playerName(table, q.seat)}) + " " + CDC.pick(q, "text");
      return;
    }
    text.textContent = CDC.pick(q, "text");
    // Staked choices are options too (their index in `options`); `stakes` gives their range.
    const staked = new Map((q.stakes || []).map((st) => [st.option, st]));
    (q.options || []).forEach((option, i) => {
      const stake = staked.get(i);
      if (!stake) {
        box.append(el("button", {class: "big choice", "data-option": String(i), disabled: answered,
          onclick: () => choose(i, null)}, CDC.pick(option, "label")));
        return;
      }
      const lo = stake.min, hi = stake.max;
      const input = el("input", {type: "number", inputmode: "numeric", min: String(lo), max: String(hi), value: String(lo),
        class: "stake-input", "data-stake-for": String(i), "aria-label": CDC.t("stake")});
      box.append(el("div", {class: "stake"},
        el("label", {}, CDC.pick(option, "label") + " — " + CDC.t("stake") + " (" + lo + "–" + hi + ")", input),
        el("button", {class: "big choice", "data-option": String(i), disabled: answered, onclick: () => {
          const value = Math.round(Number(input.value));
          if (!(value >= lo && value <= hi)) { input.setCustomValidity(lo + "–" + hi); input.reportValidity(); return; }
          choose(i, value);
        }}, CDC.t("play_stake"))));
    });
  }

  function choose(option, stake) {
    // The question's number: a tap that crosses the answer its player said aloud is refused,
    // never taken for the next question put to this seat.
    const question = state.table && state.table.question ? state.table.question.id : undefined;
    if (conn.send({type: "choose", option, stake, question})) { state.answered = question; renderQuestion(); }
  }

  function renderShout() {
    const race = state.table && state.table.race;
    const live = CDC.raceLive(race);
    const button = $("#shout");
    $("#shoutbar").hidden = state.seat === null;
    button.classList.toggle("in-race", live);
    button.disabled = state.seat === null || !!(state.table && state.table.over);
    // A seat whose phrase is not the race's (a Suite Velutée's thrower) is shown its own.
    const own = live && Array.isArray(race.own) ? race.own.find((o) => o.seat === state.seat) : undefined;
    $("#shout-hint").textContent = live ? CDC.t("shout_race", {phrase: CDC.pick(own || race, "phrase")}) : CDC.t("shout_no_race");
    $("#shoutbar").classList.toggle("in-race", live);
  }

  // A shout is timed at the finger's touch and sent as it lifts. The bar sits at the bottom, where
  // a thumb starts a swipe: a touch that turns into a scroll (the browser cancels it, or it moves)
  // is no shout, where one sent at the touch was a false shout, a Bévue.
  const SCROLL_PX = 24;
  let press = null; // {id, t, x, y}: the touch under way
  function tapTime(event) {
    // The event's own time (the touch's, before a busy page got to it: a table being drawn),
    // on performance.now()'s scale in every current browser; else the moment handled.
    const now = performance.now(), t = event.timeStamp;
    return Number.isFinite(t) && t > 0 && t <= now && now - t < 1000 ? t : now;
  }
  function pressShout(event) {
    press = {id: event.pointerId, t: tapTime(event), x: event.clientX, y: event.clientY};
  }
  function moveShout(event) {
    if (press && event.pointerId === press.id && Math.hypot(event.clientX - press.x, event.clientY - press.y) > SCROLL_PX) press = null;
  }
  function cancelShout(event) { if (press && event.pointerId === press.id) press = null; }
  function releaseShout(event) {
    if (!press || event.pointerId !== press.id) return;
    const {t, x, y} = press;
    press = null;
    if (Math.hypot(event.clientX - x, event.clientY - y) > SCROLL_PX) return; // a swipe, not a tap
    shout(t);
  }
  function clickShout(event) {
    if (event.detail === 0) shout(tapTime(event)); // a key (Enter, space) on the focused button; a finger's is released above
  }
  function shout(t) {
    if (conn.send({type: "shout", t})) {
      const b = $("#shout");
      b.classList.add("sent");
      setTimeout(() => b.classList.remove("sent"), 300);
    }
  }

  // ---- what the game says about this player -----------------------------------------------
  // A line about this seat (talk not understood, a shout too late or taken back) shows under
  // the question for a while: the player who spoke learns why nothing happened. Lines said
  // before this phone sat down are not shown again.
  const NOTE_MS = 8000;
  function renderNote() {
    const node = $("#note");
    if (state.seat === null || !state.table) { node.hidden = true; return; }
    const lines = state.table.said || [];
    const newest = lines.reduce((n, line) => Math.max(n, line.n), 0);
    if (state.noteSeen === null) state.noteSeen = newest; // seated: only what comes next
    const mine = lines.filter((line) => line.seat === state.seat && line.n > state.noteSeen);
    if (mine.length) {
      state.note = mine[mine.length - 1];
      state.noteSeen = newest;
      clearTimeout(state.noteTimer);
      state.noteTimer = setTimeout(() => { state.note = null; renderNote(); }, NOTE_MS);
    }
    node.hidden = !state.note;
    node.textContent = state.note ? CDC.pick(state.note) : "";
    node.dataset.n = state.note ? String(state.note.n) : "";
  }

  function micText() {
    const me = state.table && state.seat !== null && state.table.players && state.table.players[state.seat];
    // The host's view wins when it says offline (the stream may be lost on the way); a
    // microphone never started is no fault ("none" at the host too, or not yet told).
    const host = me && me.mic;
    const shown = state.mic === "on" && host !== "offline" ? "on"
      : state.mic === "none" && (!host || host === "none") ? "none" : "off";
    return shown;
  }

  function render() {
    const table = state.table;
    renderSeats();
    const me = table && state.seat !== null && table.players ? table.players[state.seat] : null;
    $("#me").textContent = state.seat === null ? "" : CDC.t("you_are") + " " + (me && me.name ? me.name : CDC.t("seat_n", {n: state.seat + 1}));
    const mic = micText();
    const micNode = $("#mic-state");
    micNode.dataset.mic = mic;
    micNode.textContent = CDC.t(mic === "on" ? "mic_on" : mic === "off" ? "mic_off" : "mic_none");
    $("#mic-box").hidden = state.seat === null;
    const button = $("#mic-button");
    button.hidden = state.mic === "on";
    button.textContent = CDC.t(state.mic === "none" ? "mic_button" : "mic_button_again");
    // The microphone test: while the host has not yet heard this player's voice, ask for a few words.
    const test = me && me.mic_test;
    const testNode = $("#mic-test");
    testNode.hidden = !(mic === "on" && (test === "waiting" || test === "heard"));
    testNode.dataset.test = test || "none";
    testNode.textContent = CDC.t(test === "heard" ? "mic_test_heard" : "mic_test_waiting");
    $("#calibration").textContent = CDC.t("calibration") + CDC.colon() + CDC.calibrationText(me && me.calibration);
    $("#calibration").dataset.cal = (me && me.calibration && me.calibration.state) || "none";
    CDC.renderDice($("#dice"), table);
    renderQuestion();
    renderNote();
    renderShout();
    if (table) {
      CDC.renderPlayers($("#players"), table, state.seat);
      CDC.renderRace($("#race"), table);
      CDC.renderLog($("#log"), table);
      CDC.renderOver($("#over"), table);
    }
  }

  function showNotSecure() {
    const port = location.protocol === "https:" ? Number(location.port || 443) + 1 : Number(location.port || 80);
    const trust = "http://" + location.hostname + ":" + port + "/trust";
    CDC.showError(CDC.escape(CDC.t("not_secure")) + `<a href="${CDC.escape(trust)}">${CDC.escape(trust)}</a>`, "not_secure");
  }

  // ---- start -------------------------------------------------------------------------------
  function start() {
    CDC.applyStatic();
    CDC.bindLangSwitch($("#lang"));
    CDC.onLang.push(render);
    $("#name").value = CDC.kept("cdc.name") || "";
    $("#mic-button").addEventListener("click", startMic);
    const button = $("#shout");
    button.addEventListener("pointerdown", pressShout);
    button.addEventListener("pointermove", moveShout);
    button.addEventListener("pointercancel", cancelShout);
    button.addEventListener("pointerleave", cancelShout);
    button.addEventListener("pointerup", releaseShout);
    button.addEventListener("click", clickShout);
    if (!window.isSecureContext) showNotSecure();
    if (!CDC.room) { CDC.showError(CDC.escape(CDC.t("no_room")), "no_room"); render(); return; }
    const wanted = CDC.params.has("seat") ? Number(CDC.params.get("seat")) - 1 : null;
    conn = CDC.connect({
      open() { conn.send({type: "hello", role: "phone", token: state.token, lang: CDC.lang}); },
      // The seat stays shown while reconnecting (no seat picker flashing); nothing is sent
      // for it until the host welcomes this socket again.
      close() { stopPinging(); state.live = false; },
      message(msg) {
        if (msg.type === "seats") {
          // Seated, and offered the seats: the seat went to another phone (its token opened
          // elsewhere, or the host gave it to a new phone). Said after the quiet clean-up below.
          const lost = state.seat !== null && state.live;
          if (state.token) {
            // Lost, the token stays kept: the page that took the seat may be another tab of
            // this browser, playing on with that very token (the link opened again), and the
            // phone reloads a tab it put to sleep. A token the host gave to nobody any more
            // (« phone 1 » at the host) is refused at the next hello, and forgotten then.
            // Not lost, the host refused the kept token (not this table's: a new game):
            // forget it, unless another tab has kept a newer one since, and quietly pick again.
            if (!lost && CDC.kept(TOKEN_KEY) === state.token) CDC.forget(TOKEN_KEY);
            state.token = null;
            for (const e of document.querySelectorAll('#errors [data-key^="error:"]')) e.remove();
          }
          if (lost) {
            // Nothing more is sent for the seat (clock samples, audio): the host would refuse each.
            // The microphone stops too: left on, it drained the battery and its badge said "on".
            stopPinging();
            state.live = false;
            state.resumeMic = false;
            stopMic("lost");
            CDC.showError(CDC.escape(CDC.t("seat_lost")), "seat_lost");
          }
          state.seats = msg.seats;
          state.seat = null;
          const target = wanted !== null && msg.seats.find((s) => s.seat === wanted && s.human && !s.taken);
          if (target && !state.autoClaimed) { state.autoClaimed = true; claim(target.seat); }
        } else if (msg.type === "error" && msg.code === "mic_restarts") {
          // The host refused this stream's start (too many in a minute): the microphone stays off
          // until the player turns it on again (welcomed again, it is not restarted by itself).
          stopMic("restarts");
        } else if (msg.type === "welcome") {
          CDC.clearError("seat_lost");
          // A host started again (--resume) numbers its lines and questions from 1 again: what
          // this page saw of the last one (a line's number, a question answered) is forgotten.
          if (msg.seat !== state.seat || msg.run !== state.run) {
            state.noteSeen = null; state.note = null; state.answered = null;
          }
          if (state.run !== null && msg.run !== state.run) state.table = null; // the last run's: its line numbers too
          state.run = msg.run;
          state.seat = msg.seat;
          state.live = true;
          state.token = msg.token;
          CDC.keep(TOKEN_KEY, msg.token);
          startPinging();
          if (state.mic === "on" && !state.warmup) newStream(); // the host lost the old stream with the socket
        } else if (msg.type === "pong") {
          conn.send({type: "clock", t1: msg.t1, t2: msg.t2, t3: msg.t3, t4: performance.now()});
          return; // no redraw for clock traffic
        } else if (msg.type === "table") {
          state.table = msg;
          window.cdcTable = msg;
        }
        render();
      },
    });
    CDC.conn = conn;
    render();
  }
  start();
})(window.CDC);
