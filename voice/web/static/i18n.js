// French and English for the pages. The browser's language picks (fr for any fr-*), the switch on
// the page overrides it and is kept in localStorage. Static labels carry data-i18n="key";
// dynamic texts come from the host's snapshot as *_fr / *_en pairs (see CDC.pick).
"use strict";
window.CDC = window.CDC || {};
(function (CDC) {
  const STRINGS = {
    fr: {
      title: "Cul de Chouette",
      board_title: "Cul de Chouette — la table",
      lang_switch: "English",
      connecting: "Connexion…",
      connected: "Connecté",
      reconnecting: "Connexion perdue — reconnexion…",
      mic_on: "micro actif",
      mic_off: "micro coupé",
      mic_none: "pas de micro",
      mic_button: "Activer le micro",
      mic_button_again: "Réactiver le micro",
      mic_refused: "Micro refusé : autorisez le micro pour ce site dans les réglages du navigateur, puis rechargez la page. Vous pouvez jouer en touchant les boutons.",
      mic_failed: "Le micro n'a pas démarré : ",
      mic_needs_tap: "le navigateur attend un geste : touchez « Réactiver le micro ».",
      not_secure: "Page non sécurisée : le micro exige l'adresse https. Ouvrez l'adresse https affichée par l'hôte ; pour faire confiance au certificat, voir ",
      no_room: "Adresse incomplète : il manque le code de la table (?room=…). Scannez le QR code affiché par l'hôte.",
      pick_seat: "Choisissez votre place",
      no_free_seat: "Aucune place libre à cette table. Vous jouiez sur un autre téléphone ? L'hôte vous rend votre place en tapant « phone » et votre numéro de place (« phone 2 »).",
      your_name: "Votre nom (facultatif)",
      you_are: "Vous êtes",
      calibration: "Calibrage",
      cal_ok: "délai {ms} ms",
      cal_pending: "en attente",
      cal_failed: "échec (nouvel essai plus tard, hors course)",
      cal_rechecking: "à revérifier (nouveau bip hors course)",
      cal_none: "non calibré",
      dice: "Dés",
      no_dice: "en attente du lancer",
      question: "À vous",
      waiting_for: "On attend {name}…",
      no_question: "Rien à décider pour l'instant.",
      stake: "Mise",
      play_stake: "Miser",
      shout: "CRIER !",
      shout_race: "Course : touchez si vous criez « {phrase} »",
      shout_no_race: "Pas de course en cours : crier maintenant est une Bévue (pénalité) !",
      shout_sent: "Cri envoyé",
      players: "Joueurs",
      score: "points",
      items: "objets",
      bot: "robot",
      human: "humain",
      voice: "voix",
      race: "Course",
      no_race: "Pas de course.",
      onset: "{ms} ms",
      by_voice: "voix",
      by_tap: "touche",
      by_bot: "robot",
      uncalibrated: "non calibré",
      winner: "Gagnant",
      log: "Journal",
      said: "Annonces de la table",
      nothing_said: "Rien pour l'instant.",
      over: "Partie terminée",
      won_by: "{name} gagne la partie !",
      won_by_team: "{names} gagnent la partie en équipe !",
      and: " et ",
      team_with: "Équipe {n} avec {names} : {score} points",
      error: "Erreur : ",
      "host:answered": "cette question a déjà sa réponse.",
      "host:not_asked": "rien ne vous est demandé pour l'instant.",
      "host:seat_taken": "la place {n} est déjà prise.",
      "host:name_taken": "{name} est déjà à la table : choisissez un autre nom.",
      "host:unknown_token": "cette table ne connaît pas votre place : choisissez-en une.",
      "host:name_plain": "« {name} » : donnez un nom sans [ ] < ni >.",
      "host:full": "la table est pleine ({most} connexions au plus) : fermez un onglet, ou réessayez plus tard.",
      "host:mic_restarts": "micro redémarré trop souvent en une minute : il est coupé, réactivez-le dans une minute.",
      "host:unheard": "l'hôte ne peut pas entendre ce téléphone (sa reconnaissance vocale n'a pas démarré : voyez le terminal de l'hôte) : criez et répondez avec les boutons.",
      seat_n: "Place {n}",
      taken: "prise",
      mic_hidden: "Page masquée : micro coupé. Revenez sur la page pour le réactiver.",
      mic_test_waiting: "Test du micro : dites quelques mots (votre prénom, par exemple).",
      mic_test_heard: "Micro testé : la table vous entend.",
      mic_test_board: "micro à tester",
      last_dice: "dernier lancer",
      "voice:listening": "à l'écoute",
      "voice:keyboard only": "au toucher seulement",
      "voice:say it again": "répétez",
      "voice:heard": "entendu",
      again_hint: "Une autre partie, mêmes joueurs : l'hôte tape « again ».",
      seat_lost: "Votre place joue maintenant sur un autre téléphone (ou l'hôte l'a donnée à un nouveau téléphone).",
      join_title: "Rejoindre la table",
      join_trust: "1. La première fois sur ce téléphone : faire confiance à la table",
      join_phone: "2. Prendre une place",
      join_free: "Places libres",
    },
    en: {
      title: "Cul de Chouette",
      board_title: "Cul de Chouette — the table",
      lang_switch: "Français",
      connecting: "Connecting…",
      connected: "Connected",
      reconnecting: "Connection lost — reconnecting…",
      mic_on: "mic on",
      mic_off: "mic offline",
      mic_none: "no mic",
      mic_button: "Turn the microphone on",
      mic_button_again: "Turn the microphone on again",
      mic_refused: "Microphone refused: allow the microphone for this site in the browser's settings, then reload. You can still play by tapping.",
      mic_failed: "The microphone did not start: ",
      mic_needs_tap: "the browser waits for a tap: tap « Turn the microphone on again ».",
      not_secure: "Not a secure page: the microphone needs the https address. Open the https address the host shows; to trust its certificate, see ",
      no_room: "Incomplete address: the table's code (?room=…) is missing. Scan the QR code the host shows.",
      pick_seat: "Pick your seat",
      no_free_seat: "No free seat at this table. Were you playing on another phone? The host gives your seat back by typing « phone » and your seat's number (« phone 2 »).",
      your_name: "Your name (optional)",
      you_are: "You are",
      calibration: "Calibration",
      cal_ok: "delay {ms} ms",
      cal_pending: "pending",
      cal_failed: "failed (tried again later, outside a race)",
      cal_rechecking: "rechecking (another chirp outside a race)",
      cal_none: "not calibrated",
      dice: "Dice",
      no_dice: "waiting for the throw",
      question: "Your turn",
      waiting_for: "Waiting for {name}…",
      no_question: "Nothing to decide right now.",
      stake: "Stake",
      play_stake: "Bet",
      shout: "SHOUT!",
      shout_race: "Race: tap if you shout « {phrase} »",
      shout_no_race: "No race now: shouting is a Bévue (penalty)!",
      shout_sent: "Shout sent",
      players: "Players",
      score: "points",
      items: "items",
      bot: "bot",
      human: "human",
      voice: "voice",
      race: "Race",
      no_race: "No race.",
      onset: "{ms} ms",
      by_voice: "voice",
      by_tap: "tap",
      by_bot: "bot",
      uncalibrated: "not calibrated",
      winner: "Winner",
      log: "Log",
      said: "The table says",
      nothing_said: "Nothing yet.",
      over: "Game over",
      won_by: "{name} wins the game!",
      won_by_team: "{names} win the game as a team!",
      and: " and ",
      team_with: "Team {n} with {names}: {score} points",
      error: "Error: ",
      "host:answered": "this question was answered already.",
      "host:not_asked": "nothing is asked of you now.",
      "host:seat_taken": "seat {n} is taken already.",
      "host:name_taken": "{name} is already at the table: choose another name.",
      "host:unknown_token": "this table does not know your seat: choose one.",
      "host:name_plain": "« {name} »: give a name without [ ] < or >.",
      "host:full": "the table is full ({most} connections at most): close a tab, or try again later.",
      "host:mic_restarts": "microphone restarted too often within a minute: it is off, turn it on again in a minute.",
      "host:unheard": "the host cannot hear this phone (its recogniser did not start: see the host's terminal): press the buttons to shout and answer.",
      seat_n: "Seat {n}",
      taken: "taken",
      mic_hidden: "Page hidden: microphone off. Come back to the page to turn it on again.",
      mic_test_waiting: "Microphone test: say a few words (your name, say).",
      mic_test_heard: "Microphone tested: the table hears you.",
      mic_test_board: "mic to test",
      last_dice: "last throw",
      "voice:listening": "listening",
      "voice:keyboard only": "tap only",
      "voice:say it again": "say it again",
      "voice:heard": "heard",
      again_hint: "Another game, the same players: the host types « again ».",
      seat_lost: "Your seat now plays on another phone (or the host gave it to a new phone).",
      join_title: "Join the table",
      join_trust: "1. First time on this phone: trust the table",
      join_phone: "2. Take a seat",
      join_free: "Free seats",
    },
  };

  // What the page keeps on the phone (its seat's token, the player's name, the language). Where
  // storage is blocked (cookies blocked, some private modes, an embedded browser) localStorage
  // throws as it is read: the page then keeps nothing and still plays.
  CDC.kept = function (key) {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  };
  CDC.keep = function (key, value) {
    try { window.localStorage.setItem(key, value); } catch (e) { /* not kept: asked again next time */ }
  };
  CDC.forget = function (key) {
    try { window.localStorage.removeItem(key); } catch (e) { /* nothing was kept */ }
  };

  function initialLang() {
    const kept = CDC.kept("cdc.lang");
    if (kept === "fr" || kept === "en") return kept;
    const langs = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
    return String(langs[0]).toLowerCase().startsWith("fr") ? "fr" : "en";
  }

  CDC.lang = initialLang();
  CDC.onLang = [];

  // t("key", {name: "x"}) — a static label with {placeholders} filled in.
  CDC.t = function (key, values) {
    let text = STRINGS[CDC.lang][key];
    if (text === undefined) text = STRINGS.en[key] !== undefined ? STRINGS.en[key] : key;
    for (const [k, v] of Object.entries(values || {})) text = text.split("{" + k + "}").join(String(v));
    return text;
  };

  // pick(obj, "text") — obj.text_fr / obj.text_en in the page's language; also {fr, en} objects
  // and plain strings (the host's own words when it has no translation).
  CDC.pick = function (obj, field) {
    if (obj === null || obj === undefined) return "";
    if (typeof obj === "string" || typeof obj === "number") return String(obj);
    const base = field ? field + "_" : "";
    const mine = obj[base + CDC.lang], other = obj[base + (CDC.lang === "fr" ? "en" : "fr")];
    // Mine, else the untranslated field (the host's own words), else the other language.
    if (mine !== undefined && mine !== null && mine !== "") return String(mine);
    if (field && obj[field] !== undefined && obj[field] !== null && typeof obj[field] !== "object") return String(obj[field]);
    if (other !== undefined && other !== null) return String(other);
    return "";
  };

  CDC.HOST_ERROR_MS = 10000;  // how long the host's refusal of a message stays on the page

  // The host's refusals a player meets by playing carry a code (voice/web/protocol.py `Error`):
  // said in the page's language. Others (a broken page's) as the host wrote them, in English.
  CDC.hostText = function (msg) {
    const key = "host:" + msg.code;
    if (msg.code && STRINGS.en[key] !== undefined) return CDC.t(key, msg.params || {});
    return String(msg.message);
  };

  // The session's voice status of a seat (voice/session.py: "listening", "keyboard only",
  // "say it again", "heard « intent »"), in the page's language.
  CDC.voiceText = function (status) {
    const text = String(status || "");
    const heard = text.match(/^heard « (.*) »$/);
    if (heard) return CDC.t("voice:heard") + " « " + heard[1].replace(/_/g, " ") + " »";
    const known = STRINGS[CDC.lang]["voice:" + text];
    return known !== undefined ? known : text;
  };

  CDC.colon = () => (CDC.lang === "fr" ? " : " : ": "); // French puts a space before the colon

  CDC.applyStatic = function (root) {
    document.documentElement.lang = CDC.lang;
    for (const el of (root || document).querySelectorAll("[data-i18n]")) el.textContent = CDC.t(el.dataset.i18n);
    for (const el of (root || document).querySelectorAll("[data-i18n-placeholder]")) el.placeholder = CDC.t(el.dataset.i18nPlaceholder);
  };

  // Lines shown under an error key that is a plain string: said again in the new language.
  const PLAIN_ERRORS = ["reconnecting", "mic_hidden", "seat_lost", "no_room"];

  CDC.setLang = function (lang) {
    CDC.lang = lang;
    CDC.keep("cdc.lang", lang);
    CDC.applyStatic();
    if (CDC.connection && CDC.setConnection) CDC.setConnection(CDC.connection); // the badge
    for (const key of PLAIN_ERRORS) {
      const shown = document.querySelector(`#errors [data-key="${key}"]`);
      if (shown) shown.textContent = CDC.t(key);
    }
    for (const f of CDC.onLang) f();
  };

  CDC.bindLangSwitch = function (button) {
    button.addEventListener("click", () => CDC.setLang(CDC.lang === "fr" ? "en" : "fr"));
  };
})(window.CDC);
